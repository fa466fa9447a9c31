import { preparedStatement, type Queryable } from '../db/database';
import type { PrincipalType, Role } from '../shared/principals';
import { appkeyGenerationValid } from './appkey-generations';
import { principalTypeOf } from './statement-parts';

export interface LivePrincipalRow {
  session_id: string;
  type: PrincipalType;
  principal_id: string;
  name: string;
  role: Role | null;
  /** The scope the session was granted; null: all its role grants. */
  scope: string | null;
}

/**
 * The liveness check of session `sessionId` (its principal's row, or undefined), with whatever else
 * a route reads in the same statement (see api-keys/key-read-along.ts).
 */
export type SessionRead<T> = (q: Queryable, sessionId: string) => Promise<{ live: LivePrincipalRow | undefined; alongside: T }>;

/**
 * The sessions `sessionIs` selects (a condition on `s`), each with its principal, only if all of it is
 * still live: session not revoked or past its end, user not disabled or deleted, key not deleted, and
 * opened with an appkey generation still valid.
 */
export const livePrincipalsWhere = (sessionIs: string) => `
  SELECT s.id AS session_id,
         ${principalTypeOf('s')} AS type,
         COALESCE(u.id, k.id) AS principal_id,
         COALESCE(u.username, k.appname) AS name,
         COALESCE(u.role, k.role) AS role,
         s.scope
    FROM sessions s
    LEFT JOIN users u ON u.id = s.user_id AND NOT u.disabled
    LEFT JOIN api_keys k ON k.id = s.api_key_id AND ${appkeyGenerationValid('s.key_generation', 'k')}
   WHERE ${sessionIs} AND s.revoked_at IS NULL AND s.expires_at > now()
     AND (u.id IS NOT NULL OR k.id IS NOT NULL)`;

const FIND_LIVE_PRINCIPAL = preparedStatement('sessions.find-live-principal', livePrincipalsWhere('s.id = $1'));

/** As above, and only while $2 is still the session's current refresh token (a used one is spent). */
const FIND_LIVE_REFRESH_PRINCIPAL = preparedStatement(
  'sessions.find-live-refresh-principal',
  `${livePrincipalsWhere('s.id = $1')} AND s.refresh_jti = $2`,
);

/** Session `sessionId`'s principal, only while all of it is live (the bearer check, introspection). */
export async function findLivePrincipal(q: Queryable, sessionId: string): Promise<LivePrincipalRow | undefined> {
  const { rows } = await q.queryPrepared<LivePrincipalRow>(FIND_LIVE_PRINCIPAL, [sessionId]);
  return rows[0];
}

/** The live principal of a session whose current refresh token is `refreshJti`. */
export async function findLiveRefreshPrincipal(q: Queryable, sessionId: string, refreshJti: string): Promise<LivePrincipalRow | undefined> {
  const { rows } = await q.queryPrepared<LivePrincipalRow>(FIND_LIVE_REFRESH_PRINCIPAL, [sessionId, refreshJti]);
  return rows[0];
}

/** What a session was opened for: its principal, client, scope and ID token (see migrations/0008_oauth_sessions.sql). */
export interface SessionGrantRow {
  type: PrincipalType;
  name: string;
  role: Role | null;
  client_id: string | null;
  scope: string | null;
  id_token_client: boolean;
}

const FIND_SESSION_GRANT = preparedStatement(
  'sessions.find-grant',
  `SELECT ${principalTypeOf('s')} AS type, COALESCE(u.username, k.appname) AS name, COALESCE(u.role, k.role) AS role,
          s.client_id, s.scope, s.id_token_client
     FROM sessions s
     LEFT JOIN users u ON u.id = s.user_id
     LEFT JOIN api_keys k ON k.id = s.api_key_id
    WHERE s.id = $1`,
);

/** Session `sessionId`'s client, scope and principal, live or not: a refresh checks them before it changes anything. */
export async function findSessionGrant(q: Queryable, sessionId: string): Promise<SessionGrantRow | undefined> {
  const { rows } = await q.queryPrepared<SessionGrantRow>(FIND_SESSION_GRANT, [sessionId]);
  return rows[0];
}
