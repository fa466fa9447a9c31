import { preparedStatement, type Queryable } from '../db/database';
import { auditInsertFrom } from '../audit-trail/audit-trail';
import type { RequestOrigin } from '../shared/audit-context';
import type { Role } from '../shared/principals';
import { originParams, originValues, scopeGrantedBy, timesOf, type SessionTimes } from './statement-parts';

export interface NewSession {
  /** Unix seconds the caller also stamps into the tokens, so token exp and stored expiry agree. */
  now: number;
  id: string;
  refreshJti: string;
  refreshTtlSeconds: number;
  maxTtlSeconds: number;
  origin: RequestOrigin;
}

/** What a login asked for, as the session keeps it (see migrations/0008_oauth_sessions.sql). */
export interface SessionGrant {
  /** The scope asked for; null: all the principal's role grants. */
  scope: string | null;
  /** The thumbprint of the DPoP key the session's tokens are bound to (migrations/0035); null: bearer tokens. */
  dpopJkt: string | null;
}

/** A user's login also names the client it is for, and whether that client gets an ID token. */
export interface UserSessionGrant extends SessionGrant {
  clientId: string | null;
  idToken: boolean;
}

/**
 * A user's login: the session (its refresh token never outlives its absolute end), the user's
 * last_login and the audit event, only while the password hash the login was checked against ($11) is
 * still the user's and the user is enabled, and only if the user's role now grants the scope asked for
 * ($13). A change since the check (here or on another instance) opens nothing; the row lock makes a
 * concurrent change wait for this statement, or this statement see the change. FOR NO KEY UPDATE, not
 * FOR SHARE: the statement updates the row it locks, and two logins of one user each holding a share
 * lock while waiting to update it would deadlock.
 */
const OPEN_USER_SESSION = (() => {
  const origin = originParams(8);
  return preparedStatement(
    'sessions.open-user-session',
    `WITH holder AS (
       SELECT id, role FROM users WHERE id = $2 AND password_hash = $11 AND NOT disabled FOR NO KEY UPDATE
     ), opened AS (
       INSERT INTO sessions (id, user_id, refresh_jti, created_at, expires_at, refresh_expires_at, client_id, scope, id_token_client, dpop_jkt)
       SELECT $1::uuid, holder.id, $3::uuid, to_timestamp($6), to_timestamp($6 + $5::int), to_timestamp($6 + LEAST($4::int, $5::int)),
              $12::text, $13::text, $14::boolean, $15::text
         FROM holder
        WHERE ${scopeGrantedBy('$13::text', 'holder.role')}
       RETURNING id, refresh_expires_at, created_at
     ), stamped AS (
       UPDATE users SET last_login = to_timestamp($6) FROM holder WHERE users.id = holder.id AND EXISTS (SELECT 1 FROM opened)
     ), audit AS (
       ${auditInsertFrom('opened', {
         type: 'token.issued',
         actor: "'user:' || $7::text",
         username: '$7::text',
         ...origin,
         details: `jsonb_build_object('route', ${origin.route}, 'session_id', opened.id)`,
       })}
     )
     SELECT ${timesOf('opened')}, holder.role FROM holder LEFT JOIN opened ON true`,
  );
})();

/**
 * A user's login as the statement found the user: the role the database holds now, and the new
 * session's times, or null when that role does not grant the scope asked for (nothing was written).
 */
export interface UserLogin {
  role: Role | null;
  times: SessionTimes | null;
}

/** Undefined when the user no longer holds `passwordHash`, or is disabled or gone: nothing was written. */
export async function openUserSession(
  q: Queryable,
  s: NewSession & UserSessionGrant & { userId: string; username: string; passwordHash: string },
): Promise<UserLogin | undefined> {
  type Row = { role: Role | null } & { [K in keyof SessionTimes]: SessionTimes[K] | null };
  const { rows } = await q.queryPrepared<Row>(OPEN_USER_SESSION, [
    s.id,
    s.userId,
    s.refreshJti,
    s.refreshTtlSeconds,
    s.maxTtlSeconds,
    s.now,
    s.username,
    ...originValues(s.origin),
    s.passwordHash,
    s.clientId,
    s.scope,
    s.idToken,
    s.dpopJkt,
  ]);
  const row = rows[0];
  if (!row) return undefined;
  const { role, refresh_expires_at, created_at } = row;
  return { role, times: refresh_expires_at !== null && created_at !== null ? { refresh_expires_at, created_at } : null };
}
