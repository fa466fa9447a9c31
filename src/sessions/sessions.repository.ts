import { statement, type Queryable } from '../db/database';
import type { PrincipalType, Role } from '../auth/roles';

export interface NewSession {
  /** Unix seconds the caller also stamps into the tokens, so token exp and stored expiry agree. */
  now: number;
  id: string;
  userId?: string;
  apiKeyId?: string;
  refreshJti: string;
  refreshTtlSeconds: number;
  maxTtlSeconds: number;
}

export interface SessionTimes {
  /** Unix seconds at which the current refresh token expires. */
  refresh_expires_at: number;
  created_at: number;
}

export interface LivePrincipalRow {
  session_id: string;
  type: PrincipalType;
  principal_id: string;
  name: string;
  role: Role | null;
}

// floor, not a rounding cast: a refresh token must never claim a second it does not have.
// float8 comes back from pg as a number (bigint would be a string).
const EPOCH = (column: string) => `floor(extract(epoch FROM ${column}))::float8`;
const TIMES = `${EPOCH('refresh_expires_at')} AS refresh_expires_at, ${EPOCH('created_at')} AS created_at`;

/**
 * Session $1 with its principal, only if all of it is still live: session not revoked or past its
 * end, user not disabled or deleted, key not deleted. Shared by the bearer check and refresh.
 */
const LIVE_PRINCIPAL = `
  SELECT s.id AS session_id,
         CASE WHEN s.user_id IS NOT NULL THEN 'user' ELSE 'api_key' END AS type,
         COALESCE(u.id, k.id) AS principal_id,
         COALESCE(u.username, k.appname) AS name,
         COALESCE(u.role, k.role) AS role
    FROM sessions s
    LEFT JOIN users u ON u.id = s.user_id AND NOT u.disabled
    LEFT JOIN api_keys k ON k.id = s.api_key_id
   WHERE s.id = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
     AND (u.id IS NOT NULL OR k.id IS NOT NULL)`;

const FIND_LIVE_PRINCIPAL = statement('sessions.find-live-principal', LIVE_PRINCIPAL);

/** As above, and only while $2 is still the session's current refresh token (a used one is spent). */
const FIND_LIVE_REFRESH_PRINCIPAL = statement(
  'sessions.find-live-refresh-principal',
  `${LIVE_PRINCIPAL} AND s.refresh_jti = $2`,
);

/** The refresh token never outlives the session's absolute end. */
const INSERT_SESSION = statement(
  'sessions.insert',
  `INSERT INTO sessions (id, user_id, api_key_id, refresh_jti, created_at, expires_at, refresh_expires_at)
   VALUES ($1, $2, $3, $4, to_timestamp($7), to_timestamp($7 + $6::int), to_timestamp($7 + LEAST($5::int, $6::int)))
   RETURNING ${TIMES}`,
);

/**
 * One conditional UPDATE: the row lock and PostgreSQL's re-check of `refresh_jti = presented` after
 * waiting for it let exactly one of several concurrent refreshes with one token through.
 */
const ROTATE_REFRESH_TOKEN = statement(
  'sessions.rotate-refresh-token',
  `WITH live AS (${LIVE_PRINCIPAL})
   UPDATE sessions
      SET refresh_jti = $3,
          refresh_expires_at = LEAST(to_timestamp($5 + $4::int), sessions.expires_at)
     FROM live
    WHERE sessions.id = live.session_id AND sessions.refresh_jti = $2 AND live.principal_id = $6
    RETURNING live.*, ${EPOCH('sessions.refresh_expires_at')} AS refresh_expires_at,
              ${EPOCH('sessions.created_at')} AS created_at`,
);

/** Data-modifying CTEs: jti recorded (its primary key refuses a replay), last login stamped, session opened. */
const OPEN_API_KEY_SESSION = statement(
  'sessions.open-api-key-session',
  `WITH fresh AS (
     INSERT INTO request_token_jtis (api_key_id, jti, expires_at)
     VALUES ($2, $7, to_timestamp($8))
     ON CONFLICT DO NOTHING
     RETURNING api_key_id
   ), login AS (
     UPDATE api_keys SET last_login = $6::bigint, last_ip = $9
      WHERE id = (SELECT api_key_id FROM fresh)
     RETURNING id
   )
   INSERT INTO sessions (id, api_key_id, refresh_jti, created_at, expires_at, refresh_expires_at)
   SELECT $1, id, $3, to_timestamp($6), to_timestamp($6 + $5::int), to_timestamp($6 + LEAST($4::int, $5::int))
     FROM login
   RETURNING ${TIMES}`,
);

export async function insertSession(q: Queryable, s: NewSession): Promise<SessionTimes> {
  const { rows } = await q.run<SessionTimes>(INSERT_SESSION, [
    s.id,
    s.userId ?? null,
    s.apiKeyId ?? null,
    s.refreshJti,
    s.refreshTtlSeconds,
    s.maxTtlSeconds,
    s.now,
  ]);
  return rows[0]!;
}

/**
 * Swaps the presented refresh token for a new one, only while session, principal and sub are
 * live. Returns the principal and the new times, or undefined when nothing matched.
 */
export async function rotateRefreshToken(
  q: Queryable,
  r: { now: number; sessionId: string; principalId: string; presentedJti: string; newJti: string; refreshTtlSeconds: number },
): Promise<{ principal: LivePrincipalRow; times: SessionTimes } | undefined> {
  const { rows } = await q.run<LivePrincipalRow & SessionTimes>(ROTATE_REFRESH_TOKEN, [
    r.sessionId,
    r.presentedJti,
    r.newJti,
    r.refreshTtlSeconds,
    r.now,
    r.principalId,
  ]);
  const row = rows[0];
  if (!row) return undefined;
  const { refresh_expires_at, created_at, ...principal } = row;
  return { principal, times: { refresh_expires_at, created_at } };
}

/**
 * The whole login of an API key in one statement (one round trip, atomic). No row back means the
 * request token's jti was already used.
 */
export async function openApiKeySession(
  q: Queryable,
  s: NewSession & { apiKeyId: string; jti: string; jtiExpiresAt: number; clientIp: string | null },
): Promise<SessionTimes | undefined> {
  const { rows } = await q.run<SessionTimes>(OPEN_API_KEY_SESSION, [
    s.id,
    s.apiKeyId,
    s.refreshJti,
    s.refreshTtlSeconds,
    s.maxTtlSeconds,
    s.now,
    s.jti,
    s.jtiExpiresAt,
    s.clientIp,
  ]);
  return rows[0];
}

/**
 * Revokes the session when the presented refresh token is not its current one, i.e. it was already
 * used. Returns whether a session was revoked.
 */
export async function revokeSessionOnReuse(q: Queryable, sessionId: string, presentedJti: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE sessions SET revoked_at = now(), revoked_reason = 'refresh token reuse'
      WHERE id = $1 AND refresh_jti <> $2 AND revoked_at IS NULL`,
    [sessionId, presentedJti],
  );
  return (rowCount ?? 0) > 0;
}

/** Revokes one session (logout through RFC 7009 revocation). Returns whether it was still live. */
export async function revokeSession(q: Queryable, sessionId: string, reason: string): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL', [
    sessionId,
    reason,
  ]);
  return (rowCount ?? 0) > 0;
}

export async function revokeSessionsOfApiKey(q: Queryable, apiKeyId: string, reason: string): Promise<void> {
  await q.query('UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE api_key_id = $1 AND revoked_at IS NULL', [
    apiKeyId,
    reason,
  ]);
}

export async function revokeSessionsOfUser(q: Queryable, userId: string, reason: string): Promise<void> {
  await q.query('UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE user_id = $1 AND revoked_at IS NULL', [
    userId,
    reason,
  ]);
}

export async function findLivePrincipal(q: Queryable, sessionId: string): Promise<LivePrincipalRow | undefined> {
  const { rows } = await q.run<LivePrincipalRow>(FIND_LIVE_PRINCIPAL, [sessionId]);
  return rows[0];
}

/** The live principal of a session whose current refresh token is `refreshJti`. */
export async function findLiveRefreshPrincipal(q: Queryable, sessionId: string, refreshJti: string): Promise<LivePrincipalRow | undefined> {
  const { rows } = await q.run<LivePrincipalRow>(FIND_LIVE_REFRESH_PRINCIPAL, [sessionId, refreshJti]);
  return rows[0];
}

/** Drops sessions that ended more than a day ago; they can no longer authenticate anything. */
export async function deleteEndedSessions(q: Queryable): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM sessions WHERE expires_at < now() - interval '1 day'");
  return rowCount ?? 0;
}
