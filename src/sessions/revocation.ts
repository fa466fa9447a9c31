import { preparedStatement, type Queryable } from '../db/database';
import { auditInsertFrom } from '../audit-trail/audit-trail';
import type { AuditContext, RequestOrigin } from '../shared/audit-context';
import { appkeyGenerationValid } from './appkey-generations';
import { originParams, originValues, principalColumns, principalTypeOf } from './statement-parts';

/**
 * Revokes the rows of `update` (an UPDATE of sessions) and records one event each; answers how many.
 * The actor is each session's own principal, unless `actor` (an SQL expression) names who acted.
 */
const revokeAndRecord = (name: string, type: 'refresh_token.reused' | 'session.revoked', update: string, actor?: string) => {
  const origin = originParams(3);
  const principal = principalColumns('named');
  return preparedStatement(
    name,
    `WITH revoked AS (${update} RETURNING id, user_id, api_key_id, revoked_reason),
     named AS (
       SELECT r.id, r.revoked_reason, ${principalTypeOf('r')} AS type, COALESCE(u.username, k.appname) AS name
         FROM revoked r
         LEFT JOIN users u ON u.id = r.user_id
         LEFT JOIN api_keys k ON k.id = r.api_key_id
     ), audit AS (
       ${auditInsertFrom('named', {
         type,
         ...principal,
         actor: actor ?? principal.actor,
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
  const { rows } = await q.queryPrepared<{ revoked: number }>(REVOKE_ON_REUSE, [sessionId, presentedJti, ...originValues(origin)]);
  return rows[0]!.revoked > 0;
}

/** Revokes one session (logout through RFC 7009 revocation) and records it. Returns whether it was still live. */
export async function revokeSession(q: Queryable, sessionId: string, reason: string, origin: RequestOrigin): Promise<boolean> {
  const { rows } = await q.queryPrepared<{ revoked: number }>(REVOKE_ONE, [sessionId, reason, ...originValues(origin)]);
  return rows[0]!.revoked > 0;
}

/**
 * Revokes the key's sessions whose appkey generation is no longer valid (after a regen: all but the
 * current generation's, and the previous one's while a grace lasts); returns how many.
 */
export async function revokeSessionsOfStaleAppkeys(q: Queryable, apiKeyId: string, reason: string): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE sessions s SET revoked_at = now(), revoked_reason = $2
       FROM api_keys k
      WHERE k.id = $1 AND s.api_key_id = k.id AND s.revoked_at IS NULL
        AND NOT ${appkeyGenerationValid('s.key_generation', 'k')}`,
    [apiKeyId, reason],
  );
  return rowCount ?? 0;
}

/** Why a user's sessions all end: the change made to the user (through the API or the command line). */
export type UserSessionsEndReason = 'password_changed' | 'role_changed' | 'user_disabled';

/** Every live session of one principal (`column` = $1) but session $7 (null: none is kept), revoked for reason $2 by actor $6. */
const revokeAllOf = (name: string, column: 'user_id' | 'api_key_id') =>
  revokeAndRecord(
    name,
    'session.revoked',
    `UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE ${column} = $1 AND revoked_at IS NULL AND id IS DISTINCT FROM $7::uuid`,
    '$6::text',
  );

const REVOKE_ALL_OF_USER = revokeAllOf('sessions.revoke-all-of-user', 'user_id');
const REVOKE_ALL_OF_API_KEY = revokeAllOf('sessions.revoke-all-of-api-key', 'api_key_id');

/**
 * Ends every live session of the API key, recording one session.revoked per session by whoever made
 * the change: after its role was lowered, no token obtained before may keep a higher scope. Returns
 * how many sessions ended.
 */
export async function revokeSessionsOfApiKey(q: Queryable, apiKeyId: string, reason: 'role_changed', ctx: AuditContext): Promise<number> {
  const { rows } = await q.queryPrepared<{ revoked: number }>(REVOKE_ALL_OF_API_KEY, [apiKeyId, reason, ...originValues(ctx), ctx.actor, null]);
  return rows[0]!.revoked;
}

/**
 * Ends every live session of the user but `keep` (the one a user changes their own password from),
 * recording one session.revoked per session by whoever made the change (`ctx`): after a password,
 * role or status change, a token obtained before it must not outlive it. Returns how many ended.
 */
export async function revokeSessionsOfUser(q: Queryable, userId: string, reason: UserSessionsEndReason, ctx: AuditContext, keep?: string): Promise<number> {
  const { rows } = await q.queryPrepared<{ revoked: number }>(REVOKE_ALL_OF_USER, [userId, reason, ...originValues(ctx), ctx.actor, keep ?? null]);
  return rows[0]!.revoked;
}

/**
 * Ends every live session of the keys `apiKeyIds` (a key turned off: its tokens stop working, and
 * turning it on again does not bring them back); answers how many ended, per key.
 */
export async function revokeSessionsOfApiKeys(q: Queryable, apiKeyIds: readonly string[], reason: string): Promise<Map<string, number>> {
  const { rows } = await q.query<{ api_key_id: string; revoked: number }>(
    `WITH revoked AS (
       UPDATE sessions SET revoked_at = now(), revoked_reason = $2
        WHERE api_key_id = ANY ($1::uuid[]) AND revoked_at IS NULL
        RETURNING api_key_id
     )
     SELECT api_key_id, count(*)::int AS revoked FROM revoked GROUP BY api_key_id`,
    [apiKeyIds, reason],
  );
  return new Map(rows.map((r) => [r.api_key_id, r.revoked]));
}

/** Brings the ends of key `apiKeyId`'s live sessions, and of their refresh tokens, forward to `until` (Unix seconds) where they lay later. */
export async function capSessionsOfApiKey(q: Queryable, apiKeyId: string, until: number): Promise<void> {
  await q.query(
    `UPDATE sessions SET expires_at = LEAST(expires_at, to_timestamp($2)), refresh_expires_at = LEAST(refresh_expires_at, to_timestamp($2))
      WHERE api_key_id = $1 AND revoked_at IS NULL AND expires_at > to_timestamp($2)`,
    [apiKeyId, until],
  );
}
