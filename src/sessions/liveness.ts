import { preparedStatement, type Queryable } from '../db/database';
import type { PrincipalType, Role } from '../shared/principals';
import { addressAllowed, keyInForce } from '../key-policies/policy-sql';
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
 * The liveness check of session `sessionId` for a call from `address` (its principal's row, or undefined), with whatever else
 * a route reads in the same statement (see api-keys/key-read-along.ts).
 */
export type SessionRead<T> = (q: Queryable, sessionId: string, address: string | null) => Promise<{ live: LivePrincipalRow | undefined; alongside: T }>;

/** What a live session's key says beyond its principal: what a grant needs to issue its tokens (livePrincipalsWhere's `keyPolicy`). */
export interface LiveKeyPolicy {
  /** The key's permissions (its tokens' scope after the role's); [] for a user. */
  permissions: string[];
  /** The key's expiry, Unix seconds: no token outlives it; null for a user or a key that never expires. */
  not_after: number | null;
}

/**
 * The sessions `sessionIs` selects (a condition on `s`), each with its principal, only if all of it is
 * still live: session not revoked or past its end, user not disabled or deleted, key not deleted, on,
 * not expired, and opened with an appkey generation still valid. `options.address` (an SQL expression
 * of type inet) also requires a key's policy to allow that address (contract, "Tokens follow the
 * key"); `options.keyPolicy` adds the columns of LiveKeyPolicy, and `networks`, the key's allowed networks
 * ('{}' for a user: anywhere), for a statement to check an address of its own against.
 */
export const livePrincipalsWhere = (sessionIs: string, options: { address?: string; keyPolicy?: boolean } = {}) => `
  SELECT s.id AS session_id,
         ${principalTypeOf('s')} AS type,
         COALESCE(u.id, k.id) AS principal_id,
         COALESCE(u.username, k.appname) AS name,
         COALESCE(u.role, k.role) AS role,
         s.scope${
           options.keyPolicy
             ? `,
         COALESCE(k.permissions, '{}') AS permissions,
         extract(epoch FROM k.expires_at)::float8 AS not_after,
         COALESCE(k.allowed_networks, '{}') AS networks`
             : ''
         }
    FROM sessions s
    LEFT JOIN users u ON u.id = s.user_id AND NOT u.disabled
    LEFT JOIN api_keys k ON k.id = s.api_key_id AND ${appkeyGenerationValid('s.key_generation', 'k')} AND ${keyInForce('k')}${
      options.address ? ` AND ${addressAllowed('k.allowed_networks', options.address)}` : ''
    }
   WHERE ${sessionIs} AND s.revoked_at IS NULL AND s.expires_at > now()
     AND (u.id IS NOT NULL OR k.id IS NOT NULL)`;

const FIND_LIVE_PRINCIPAL = preparedStatement('sessions.find-live-principal', livePrincipalsWhere('s.id = $1', { keyPolicy: true }));

/** As FIND_LIVE_PRINCIPAL, for a call from address $2 (null: unknown), which a key's policy must allow. */
const FIND_LIVE_PRINCIPAL_FROM = preparedStatement('sessions.find-live-principal-from', livePrincipalsWhere('s.id = $1', { address: '$2::inet' }));

/** As above, and only while $2 is still the session's current refresh token (a used one is spent). */
const FIND_LIVE_REFRESH_PRINCIPAL = preparedStatement(
  'sessions.find-live-refresh-principal',
  `${livePrincipalsWhere('s.id = $1', { keyPolicy: true })} AND s.refresh_jti = $2`,
);

/** Session `sessionId`'s principal, only while all of it is live (introspection: from wherever the token's holder is). */
export async function findLivePrincipal(q: Queryable, sessionId: string): Promise<(LivePrincipalRow & LiveKeyPolicy) | undefined> {
  const { rows } = await q.queryPrepared<LivePrincipalRow & LiveKeyPolicy>(FIND_LIVE_PRINCIPAL, [sessionId]);
  return rows[0];
}

/**
 * The bearer check: session `sessionId`'s principal while all of it is live and, for a key's session,
 * while the key's policy allows `address` (as clientAddressText gives it; null: unknown).
 */
export async function findLivePrincipalFrom(q: Queryable, sessionId: string, address: string | null): Promise<LivePrincipalRow | undefined> {
  const { rows } = await q.queryPrepared<LivePrincipalRow>(FIND_LIVE_PRINCIPAL_FROM, [sessionId, address]);
  return rows[0];
}

/** The live principal of a session whose current refresh token is `refreshJti`. */
export async function findLiveRefreshPrincipal(q: Queryable, sessionId: string, refreshJti: string): Promise<(LivePrincipalRow & LiveKeyPolicy) | undefined> {
  const { rows } = await q.queryPrepared<LivePrincipalRow & LiveKeyPolicy>(FIND_LIVE_REFRESH_PRINCIPAL, [sessionId, refreshJti]);
  return rows[0];
}

/** What a session was opened for: its principal, client, scope and ID token (see migrations/0008_oauth_sessions.sql). */
export interface SessionGrantRow {
  type: PrincipalType;
  name: string;
  role: Role | null;
  /** A key's permissions; [] for a user. */
  permissions: string[];
  client_id: string | null;
  scope: string | null;
  id_token_client: boolean;
}

const FIND_SESSION_GRANT = preparedStatement(
  'sessions.find-grant',
  `SELECT ${principalTypeOf('s')} AS type, COALESCE(u.username, k.appname) AS name, COALESCE(u.role, k.role) AS role,
          COALESCE(k.permissions, '{}') AS permissions, s.client_id, s.scope, s.id_token_client
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
