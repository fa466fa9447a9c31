import { statement, type Queryable } from '../db/database';
import { unnestRows, unnestValues, type UnnestColumn } from '../db/unnest';
import type { PrincipalType, Role } from '../shared/principals';
import type { RequestOrigin } from '../shared/audit-context';
import { auditInsertFrom } from '../audit-trail/audit-trail';

/**
 * The liveness check of session `sessionId` (its principal's row, or undefined), with whatever else
 * a route reads in the same statement: a database round trip costs more than the rest of a read.
 */
export type SessionRead<T> = (q: Queryable, sessionId: string) => Promise<{ live: LivePrincipalRow | undefined; alongside: T }>;

export interface NewSession {
  /** Unix seconds the caller also stamps into the tokens, so token exp and stored expiry agree. */
  now: number;
  id: string;
  refreshJti: string;
  refreshTtlSeconds: number;
  maxTtlSeconds: number;
  origin: RequestOrigin;
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
/** A session's times as SessionTimes names them, read from `source` (a sessions row, or one made of it). */
const timesOf = (source: string) => `${EPOCH(`${source}.refresh_expires_at`)} AS refresh_expires_at, ${EPOCH(`${source}.created_at`)} AS created_at`;

/**
 * The sessions `sessionIs` selects (a condition on `s`), each with its principal, only if all of it is
 * still live: session not revoked or past its end, user not disabled or deleted, key not deleted, and
 * opened with the key's current appkey or with the previous one while its grace lasts.
 */
const livePrincipals = (sessionIs: string) => `
  SELECT s.id AS session_id,
         CASE WHEN s.user_id IS NOT NULL THEN 'user' ELSE 'api_key' END AS type,
         COALESCE(u.id, k.id) AS principal_id,
         COALESCE(u.username, k.appname) AS name,
         COALESCE(u.role, k.role) AS role
    FROM sessions s
    LEFT JOIN users u ON u.id = s.user_id AND NOT u.disabled
    LEFT JOIN api_keys k ON k.id = s.api_key_id
          AND (s.key_generation = k.key_generation
               OR (s.key_generation = k.key_generation - 1 AND k.previous_key_valid_until > now()))
   WHERE ${sessionIs} AND s.revoked_at IS NULL AND s.expires_at > now()
     AND (u.id IS NOT NULL OR k.id IS NOT NULL)`;

/**
 * Session $1 with its principal, only while all of it is live. Shared by the bearer check, refresh and
 * introspection, and by reads that ride along with the bearer check (api-keys.repository).
 */
export const LIVE_PRINCIPAL = livePrincipals('s.id = $1');

/** The request's origin is the last three parameters of every statement that records an event. */
const originParams = (first: number) => ({ clientAddress: `$${first}`, requestId: `$${first + 1}`, route: `$${first + 2}::text` });
const originValues = (o: RequestOrigin) => [o.clientAddress, o.requestId, o.route];

/** The same for a batch (see unnestRows): its last three columns, and their names on a row of `source`. */
const originColumns = <T extends { origin: RequestOrigin }>(): UnnestColumn<T>[] => [
  { name: 'client_address', type: 'text', of: (item) => item.origin.clientAddress },
  { name: 'request_id', type: 'text', of: (item) => item.origin.requestId },
  { name: 'route', type: 'text', of: (item) => item.origin.route },
];
const originColumnsOf = (source: string) => ({ clientAddress: `${source}.client_address`, requestId: `${source}.request_id`, route: `${source}.route` });

/** Audit columns for rows of `source` that carry `type` ('user' | 'api_key') and `name`. */
const principalColumns = (source: string) => ({
  actor: `${source}.type || ':' || ${source}.name`,
  appname: `CASE WHEN ${source}.type = 'api_key' THEN ${source}.name END`,
  username: `CASE WHEN ${source}.type = 'user' THEN ${source}.name END`,
});

const FIND_LIVE_PRINCIPAL = statement('sessions.find-live-principal', LIVE_PRINCIPAL);

/** As above, and only while $2 is still the session's current refresh token (a used one is spent). */
const FIND_LIVE_REFRESH_PRINCIPAL = statement(
  'sessions.find-live-refresh-principal',
  `${LIVE_PRINCIPAL} AND s.refresh_jti = $2`,
);

/**
 * A user's login: the session (its refresh token never outlives its absolute end) and its audit event,
 * only while the password hash the login was checked against ($11) is still the user's and the user is
 * enabled. A change since the check (here or on another instance) opens nothing; FOR SHARE makes a
 * concurrent change wait for this statement, or this statement see the change.
 */
const OPEN_USER_SESSION = (() => {
  const origin = originParams(8);
  return statement(
    'sessions.open-user-session',
    `WITH holder AS (
       SELECT id, role FROM users WHERE id = $2 AND password_hash = $11 AND NOT disabled FOR SHARE
     ), opened AS (
       INSERT INTO sessions (id, user_id, refresh_jti, created_at, expires_at, refresh_expires_at)
       SELECT $1::uuid, holder.id, $3::uuid, to_timestamp($6), to_timestamp($6 + $5::int), to_timestamp($6 + LEAST($4::int, $5::int))
         FROM holder
       RETURNING id, refresh_expires_at, created_at
     ), audit AS (
       ${auditInsertFrom('opened', {
         type: 'token.issued',
         actor: "'user:' || $7::text",
         username: '$7::text',
         ...origin,
         details: `jsonb_build_object('route', ${origin.route}, 'session_id', opened.id)`,
       })}
     )
     SELECT ${timesOf('opened')}, holder.role FROM opened, holder`,
  );
})();

/**
 * One conditional UPDATE: the row lock and PostgreSQL's re-check of `refresh_jti = presented` after
 * waiting for it let exactly one of several concurrent refreshes with one token through.
 */
const ROTATE_REFRESH_TOKEN = (() => {
  const origin = originParams(7);
  return statement(
    'sessions.rotate-refresh-token',
    `WITH live AS (${LIVE_PRINCIPAL}),
     rotated AS (
       UPDATE sessions
          SET refresh_jti = $3,
              refresh_expires_at = LEAST(to_timestamp($5 + $4::int), sessions.expires_at)
         FROM live
        -- revoked_at again: \`live\` is this statement's snapshot, and a revoke that commits while the
        -- UPDATE waits for the row is seen only in the row's new version, which this WHERE rechecks.
        WHERE sessions.id = live.session_id AND sessions.refresh_jti = $2 AND live.principal_id = $6
          AND sessions.revoked_at IS NULL
        RETURNING live.*, ${timesOf('sessions')}
     ), audit AS (
       ${auditInsertFrom('rotated', {
         type: 'token.issued',
         ...principalColumns('rotated'),
         ...origin,
         details: `jsonb_build_object('route', ${origin.route}, 'session_id', rotated.session_id)`,
       })}
     )
     SELECT * FROM rotated`,
  );
})();

export type ApiKeyLogin = NewSession & { apiKeyId: string; keyGeneration: number; jti: string; jtiExpiresAt: number };

const LOGIN_COLUMNS: UnnestColumn<ApiKeyLogin>[] = [
  { name: 'session_id', type: 'uuid', of: (l) => l.id },
  { name: 'api_key_id', type: 'uuid', of: (l) => l.apiKeyId },
  { name: 'key_generation', type: 'int', of: (l) => l.keyGeneration },
  { name: 'refresh_jti', type: 'uuid', of: (l) => l.refreshJti },
  { name: 'jti', type: 'text', of: (l) => l.jti },
  { name: 'jti_expires_at', type: 'float8', of: (l) => l.jtiExpiresAt },
  { name: 'issued_at', type: 'bigint', of: (l) => l.now },
  { name: 'refresh_ttl', type: 'int', of: (l) => l.refreshTtlSeconds },
  { name: 'max_ttl', type: 'int', of: (l) => l.maxTtlSeconds },
  ...originColumns(),
];

/**
 * The logins of several API keys in one statement and one commit (the exchange coalesces concurrent
 * requests, see Coalescer). Per request: the jti recorded (its primary key refuses a replay) and, for a
 * fresh jti, last login stamped, session opened and the event recorded. One row back per request.
 *
 * The exchange may have verified with cached appkeys (AppkeyCache), so a request counts only while its
 * key is still that id and the appkey's generation is still valid. Those rows are locked first, in id
 * order: a concurrent regen or delete then waits for this commit rather than slipping in between the
 * check and the writes, and two batches always lock in the same order, so they cannot deadlock.
 */
const OPEN_API_KEY_SESSIONS = statement(
  'sessions.open-api-key-sessions',
  `WITH req AS (
     ${unnestRows(LOGIN_COLUMNS)}
   ), locked AS (
     SELECT id, appname, role, key_generation, previous_key_valid_until > now() AS previous_valid
       FROM api_keys WHERE id IN (SELECT api_key_id FROM req)
      ORDER BY id FOR NO KEY UPDATE
   ), valid AS (
     SELECT req.*, locked.appname, locked.role
       FROM req JOIN locked ON locked.id = req.api_key_id
      WHERE locked.key_generation = req.key_generation
         OR (locked.key_generation = req.key_generation + 1 AND locked.previous_valid)
   ), recorded AS (
     INSERT INTO request_token_jtis (api_key_id, jti, expires_at)
     SELECT api_key_id, jti, to_timestamp(jti_expires_at) FROM valid
     ON CONFLICT DO NOTHING
     RETURNING api_key_id, jti
   ), fresh AS (
     -- The same token twice in one batch: the first gets the session, the second is a replay.
     SELECT DISTINCT ON (api_key_id, jti) valid.*
       FROM valid JOIN recorded USING (api_key_id, jti)
      ORDER BY api_key_id, jti, ord
   ), login AS (
     UPDATE api_keys SET last_login = latest.issued_at, last_ip = latest.client_address
       FROM (SELECT DISTINCT ON (api_key_id) api_key_id, issued_at, client_address FROM fresh ORDER BY api_key_id, ord DESC) AS latest
      WHERE api_keys.id = latest.api_key_id
   ), opened AS (
     INSERT INTO sessions (id, api_key_id, key_generation, refresh_jti, created_at, expires_at, refresh_expires_at)
     SELECT session_id, api_key_id, key_generation, refresh_jti,
            to_timestamp(issued_at), to_timestamp(issued_at + max_ttl), to_timestamp(issued_at + LEAST(refresh_ttl, max_ttl))
       FROM fresh
     RETURNING id, ${timesOf('sessions')}
   ), audit AS (
     ${auditInsertFrom('(SELECT * FROM fresh ORDER BY ord) AS fresh', {
       type: 'token.issued',
       actor: "'api_key:' || fresh.appname",
       appname: 'fresh.appname',
       ...originColumnsOf('fresh'),
       details: "jsonb_build_object('route', fresh.route, 'session_id', fresh.session_id)",
     })}
   )
   SELECT valid.ord IS NOT NULL AS key_valid, valid.role, opened.refresh_expires_at, opened.created_at
     FROM req
     LEFT JOIN valid USING (ord)
     LEFT JOIN opened ON opened.id = req.session_id
    ORDER BY req.ord`,
);

/** A user's new session: its times, and the user's role as the database holds it now. */
export interface OpenedUserSession extends SessionTimes {
  role: Role | null;
}

/** Undefined when the user no longer holds `passwordHash`, or is disabled or gone: nothing was written. */
export async function openUserSession(
  q: Queryable,
  s: NewSession & { userId: string; username: string; passwordHash: string },
): Promise<OpenedUserSession | undefined> {
  const { rows } = await q.run<OpenedUserSession>(OPEN_USER_SESSION, [
    s.id,
    s.userId,
    s.refreshJti,
    s.refreshTtlSeconds,
    s.maxTtlSeconds,
    s.now,
    s.username,
    ...originValues(s.origin),
    s.passwordHash,
  ]);
  return rows[0];
}

export interface RefreshRotation {
  now: number;
  sessionId: string;
  principalId: string;
  presentedJti: string;
  newJti: string;
  refreshTtlSeconds: number;
  origin: RequestOrigin;
}

export interface RotatedRefresh {
  principal: LivePrincipalRow;
  times: SessionTimes;
}

const ROTATION_COLUMNS: UnnestColumn<RefreshRotation>[] = [
  { name: 'session_id', type: 'uuid', of: (r) => r.sessionId },
  { name: 'principal_id', type: 'uuid', of: (r) => r.principalId },
  { name: 'presented_jti', type: 'uuid', of: (r) => r.presentedJti },
  { name: 'new_jti', type: 'uuid', of: (r) => r.newJti },
  { name: 'refresh_ttl', type: 'int', of: (r) => r.refreshTtlSeconds },
  { name: 'issued_at', type: 'bigint', of: (r) => r.now },
  ...originColumns(),
];

/**
 * Several refreshes in one statement and one commit (the refresh grant coalesces concurrent requests,
 * see Coalescer), each as ROTATE_REFRESH_TOKEN does it alone. The sessions are locked first, SKIP
 * LOCKED: the batch never waits for a lock, so it can never be part of a deadlock with another
 * statement that changes several sessions. What it did not rotate (locked elsewhere, already used,
 * not live, or the same token twice in the batch) the grant then tries alone, which waits its turn.
 */
const ROTATE_REFRESH_TOKENS = statement(
  'sessions.rotate-refresh-tokens',
  `WITH req AS (
     ${unnestRows(ROTATION_COLUMNS)}
   ), locked AS (
     SELECT id FROM sessions
      WHERE id IN (SELECT session_id FROM req) AND revoked_at IS NULL AND expires_at > now()
      FOR NO KEY UPDATE SKIP LOCKED
   ), live AS (${livePrincipals('s.id IN (SELECT id FROM locked)')}
   ), rotated AS (
     -- The same token twice in one batch matches one session twice: it is updated once, for one of them.
     UPDATE sessions
        SET refresh_jti = req.new_jti,
            refresh_expires_at = LEAST(to_timestamp(req.issued_at + req.refresh_ttl), sessions.expires_at)
       FROM req JOIN live ON live.session_id = req.session_id AND live.principal_id = req.principal_id
      WHERE sessions.id = req.session_id AND sessions.refresh_jti = req.presented_jti
      RETURNING req.ord, req.client_address, req.request_id, req.route, live.*, ${timesOf('sessions')}
   ), audit AS (
     ${auditInsertFrom('(SELECT * FROM rotated ORDER BY ord) AS rotated', {
       type: 'token.issued',
       ...principalColumns('rotated'),
       ...originColumnsOf('rotated'),
       details: "jsonb_build_object('route', rotated.route, 'session_id', rotated.session_id)",
     })}
   )
   SELECT rotated.session_id, rotated.type, rotated.principal_id, rotated.name, rotated.role,
          rotated.refresh_expires_at, rotated.created_at
     FROM req LEFT JOIN rotated USING (ord)
    ORDER BY req.ord`,
);

/** Many rotations in one statement; one answer per rotation, in order: undefined where the batch did not rotate it. */
export async function rotateRefreshTokens(q: Queryable, rotations: RefreshRotation[]): Promise<(RotatedRefresh | undefined)[]> {
  type Row = { [K in keyof (LivePrincipalRow & SessionTimes)]: (LivePrincipalRow & SessionTimes)[K] | null };
  const { rows } = await q.run<Row>(ROTATE_REFRESH_TOKENS, unnestValues(ROTATION_COLUMNS, rotations));
  return rows.map(({ refresh_expires_at, created_at, ...principal }) =>
    principal.session_id === null || refresh_expires_at === null || created_at === null
      ? undefined
      : { principal: principal as LivePrincipalRow, times: { refresh_expires_at, created_at } },
  );
}

/**
 * Swaps the presented refresh token for a new one, only while session, principal and sub are
 * live, and records the issue. Returns the principal and the new times, or undefined when nothing matched.
 */
export async function rotateRefreshToken(q: Queryable, r: RefreshRotation): Promise<RotatedRefresh | undefined> {
  const { rows } = await q.run<LivePrincipalRow & SessionTimes>(ROTATE_REFRESH_TOKEN, [
    r.sessionId,
    r.presentedJti,
    r.newJti,
    r.refreshTtlSeconds,
    r.now,
    r.principalId,
    ...originValues(r.origin),
  ]);
  const row = rows[0];
  if (!row) return undefined;
  const { refresh_expires_at, created_at, ...principal } = row;
  return { principal, times: { refresh_expires_at, created_at } };
}

export type ApiKeySessionOutcome =
  | { opened: true; role: Role | null; times: SessionTimes }
  /**
   * Nothing opened. `stale`: the key is gone or the appkey's generation is no longer valid, and
   * nothing was written; `replayed`: the jti was used before.
   */
  | { opened: false; refused: 'stale' | 'replayed' };

/** The logins of API keys, all in one statement (one round trip, one commit); one outcome per login, in order. */
export async function openApiKeySessions(q: Queryable, logins: ApiKeyLogin[]): Promise<ApiKeySessionOutcome[]> {
  type Row = { key_valid: boolean; role: Role | null } & { [K in keyof SessionTimes]: SessionTimes[K] | null };
  const { rows } = await q.run<Row>(OPEN_API_KEY_SESSIONS, unnestValues(LOGIN_COLUMNS, logins));
  return rows.map(({ key_valid, role, refresh_expires_at, created_at }): ApiKeySessionOutcome => {
    if (refresh_expires_at !== null && created_at !== null) return { opened: true, role, times: { refresh_expires_at, created_at } };
    return { opened: false, refused: key_valid ? 'replayed' : 'stale' };
  });
}

/** Revokes the rows of `revoked` (sessions RETURNING id, user_id, api_key_id) and records one event each. */
const revokeAndRecord = (name: string, type: 'refresh_token.reused' | 'session.revoked', update: string) => {
  const origin = originParams(3);
  return statement(
    name,
    `WITH revoked AS (${update} RETURNING id, user_id, api_key_id, revoked_reason),
     named AS (
       SELECT r.id, r.revoked_reason,
              CASE WHEN r.user_id IS NOT NULL THEN 'user' ELSE 'api_key' END AS type,
              COALESCE(u.username, k.appname) AS name
         FROM revoked r
         LEFT JOIN users u ON u.id = r.user_id
         LEFT JOIN api_keys k ON k.id = r.api_key_id
     ), audit AS (
       ${auditInsertFrom('named', {
         type,
         ...principalColumns('named'),
         ...origin,
         details: `jsonb_build_object('route', ${origin.route}, 'session_id', named.id, 'reason', named.revoked_reason)`,
       })}
     )
     SELECT count(*)::int AS revoked FROM revoked`,
  );
};

const REVOKE_ON_REUSE = revokeAndRecord(
  'sessions.revoke-on-reuse',
  'refresh_token.reused',
  `UPDATE sessions SET revoked_at = now(), revoked_reason = 'refresh token reuse'
    WHERE id = $1 AND refresh_jti <> $2 AND revoked_at IS NULL`,
);

const REVOKE_ONE = revokeAndRecord(
  'sessions.revoke',
  'session.revoked',
  'UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL',
);

/**
 * Revokes the session when the presented refresh token is not its current one, i.e. it was already
 * used, and records the reuse. Returns whether a session was revoked.
 */
export async function revokeSessionOnReuse(q: Queryable, sessionId: string, presentedJti: string, origin: RequestOrigin): Promise<boolean> {
  const { rows } = await q.run<{ revoked: number }>(REVOKE_ON_REUSE, [sessionId, presentedJti, ...originValues(origin)]);
  return rows[0]!.revoked > 0;
}

/** Revokes one session (logout through RFC 7009 revocation) and records it. Returns whether it was still live. */
export async function revokeSession(q: Queryable, sessionId: string, reason: string, origin: RequestOrigin): Promise<boolean> {
  const { rows } = await q.run<{ revoked: number }>(REVOKE_ONE, [sessionId, reason, ...originValues(origin)]);
  return rows[0]!.revoked > 0;
}

/** Revokes the key's sessions opened with an appkey generation older than `belowGeneration`; returns how many. */
export async function revokeSessionsOfApiKey(
  q: Queryable,
  apiKeyId: string,
  belowGeneration: number,
  reason: string,
): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE sessions SET revoked_at = now(), revoked_reason = $3
      WHERE api_key_id = $1 AND key_generation < $2 AND revoked_at IS NULL`,
    [apiKeyId, belowGeneration, reason],
  );
  return rowCount ?? 0;
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
