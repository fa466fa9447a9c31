import type { Queryable } from '../db/database';
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

// floor, not ::bigint (which rounds): a refresh token must never claim a second it does not have.
const EPOCH = (column: string) => `floor(extract(epoch FROM ${column}))::bigint`;

/** Opens a session; the refresh token never outlives the session's absolute end. */
export async function insertSession(q: Queryable, s: NewSession): Promise<SessionTimes> {
  const { rows } = await q.query<SessionTimes>(
    `INSERT INTO sessions (id, user_id, api_key_id, refresh_jti, created_at, expires_at, refresh_expires_at)
     VALUES ($1, $2, $3, $4, to_timestamp($7), to_timestamp($7 + $6::int), to_timestamp($7 + LEAST($5::int, $6::int)))
     RETURNING ${EPOCH('refresh_expires_at')} AS refresh_expires_at, ${EPOCH('created_at')} AS created_at`,
    [s.id, s.userId ?? null, s.apiKeyId ?? null, s.refreshJti, s.refreshTtlSeconds, s.maxTtlSeconds, s.now],
  );
  return normalise(rows[0]!);
}

/**
 * Swaps the presented refresh token for a new one, only while session and principal are live, in
 * one conditional UPDATE: of concurrent calls with the same token, the row lock and the re-check of
 * `refresh_jti = presented` let exactly one through. Returns the principal and the new times.
 */
export async function rotateRefreshToken(
  q: Queryable,
  r: { now: number; sessionId: string; principalId: string; presentedJti: string; newJti: string; refreshTtlSeconds: number },
): Promise<{ principal: LivePrincipalRow; times: SessionTimes } | undefined> {
  const { rows } = await q.query<LivePrincipalRow & SessionTimes>(
    `WITH live AS (${LIVE_PRINCIPAL})
     UPDATE sessions
        SET refresh_jti = $3,
            refresh_expires_at = LEAST(to_timestamp($5 + $4::int), sessions.expires_at)
       FROM live
      WHERE sessions.id = live.session_id AND sessions.refresh_jti = $2 AND live.principal_id = $6
      RETURNING live.*, ${EPOCH('sessions.refresh_expires_at')} AS refresh_expires_at,
                ${EPOCH('sessions.created_at')} AS created_at`,
    [r.sessionId, r.presentedJti, r.newJti, r.refreshTtlSeconds, r.now, r.principalId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { refresh_expires_at, created_at, ...principal } = row;
  return { principal, times: normalise({ refresh_expires_at, created_at }) };
}

/**
 * The whole login of an API key in one statement (one round trip, atomic): record the request
 * token's jti (the primary key refuses a replay), stamp last_login/last_ip, open the session.
 * No row back means the jti was already used.
 */
export async function openApiKeySession(
  q: Queryable,
  s: NewSession & { apiKeyId: string; jti: string; jtiExpiresAt: number; clientIp: string | null },
): Promise<SessionTimes | undefined> {
  const { rows } = await q.query<SessionTimes>(
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
     RETURNING ${EPOCH('refresh_expires_at')} AS refresh_expires_at, ${EPOCH('created_at')} AS created_at`,
    [s.id, s.apiKeyId, s.refreshJti, s.refreshTtlSeconds, s.maxTtlSeconds, s.now, s.jti, s.jtiExpiresAt, s.clientIp],
  );
  return rows[0] && normalise(rows[0]);
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

export async function revokeSessionsOfApiKey(q: Queryable, apiKeyId: string, reason: string): Promise<void> {
  await q.query('UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE api_key_id = $1 AND revoked_at IS NULL', [
    apiKeyId,
    reason,
  ]);
}

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

export async function findLivePrincipal(q: Queryable, sessionId: string): Promise<LivePrincipalRow | undefined> {
  const { rows } = await q.query<LivePrincipalRow>(LIVE_PRINCIPAL, [sessionId]);
  return rows[0];
}

/** Drops sessions that ended more than a day ago; they can no longer authenticate anything. */
export async function deleteEndedSessions(q: Queryable): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM sessions WHERE expires_at < now() - interval '1 day'");
  return rowCount ?? 0;
}

function normalise(row: SessionTimes): SessionTimes {
  // bigint comes back from pg as a string.
  return { refresh_expires_at: Number(row.refresh_expires_at), created_at: Number(row.created_at) };
}

export async function revokeSessionsOfUser(q: Queryable, userId: string, reason: string): Promise<void> {
  await q.query('UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE user_id = $1 AND revoked_at IS NULL', [
    userId,
    reason,
  ]);
}
