import { preparedStatement, type Queryable } from '../db/database';
import { unnestRows, unnestValues, type UnnestColumn } from '../db/unnest';
import { auditInsertFrom } from '../audit-trail/audit-trail';
import type { RequestOrigin } from '../shared/audit-context';
import { addressAllowed } from '../key-policies/policy-sql';
import { livePrincipalsWhere, type LiveKeyPolicy, type LivePrincipalRow } from './liveness';
import { originColumns, originColumnsOf, principalColumns, timesOf, type SessionTimes } from './statement-parts';

export interface RefreshRotation {
  now: number;
  /** The narrower scope the session keeps from now on; null keeps its scope. */
  scope: string | null;
  sessionId: string;
  principalId: string;
  presentedJti: string;
  /**
   * The DPoP key the refresh was proved with (null: none): a bound session's must be its key; an
   * unbound session is bound to it from now on (RFC 9449 §5).
   */
  dpopJkt: string | null;
  newJti: string;
  refreshTtlSeconds: number;
  /** The caller's address as clientAddressText gives it (null: unknown): a key's policy must allow it. */
  address: string | null;
  origin: RequestOrigin;
}

export interface RotatedRefresh {
  /** The principal, with the session's scope after the rotation, and for a key what its policy says of its tokens. */
  principal: LivePrincipalRow & LiveKeyPolicy;
  times: SessionTimes;
  /** The client the session was opened for (null: DEFAULT_CLIENT_ID), and whether its tokens come with an ID token for it. */
  client: { id: string | null; idToken: boolean };
}

const ROTATION_COLUMNS: UnnestColumn<RefreshRotation>[] = [
  { name: 'session_id', type: 'uuid', of: (r) => r.sessionId },
  { name: 'principal_id', type: 'uuid', of: (r) => r.principalId },
  { name: 'presented_jti', type: 'uuid', of: (r) => r.presentedJti },
  { name: 'dpop_jkt', type: 'text', of: (r) => r.dpopJkt },
  { name: 'new_jti', type: 'uuid', of: (r) => r.newJti },
  { name: 'refresh_ttl', type: 'int', of: (r) => r.refreshTtlSeconds },
  { name: 'issued_at', type: 'bigint', of: (r) => r.now },
  { name: 'scope', type: 'text', of: (r) => r.scope },
  { name: 'address', type: 'inet', of: (r) => r.address },
  ...originColumns(),
];

/**
 * Refresh rotation, for one or many: each presented refresh token that is still its live session's
 * current one is swapped for the new one and the issue recorded. The sessions are locked first; after
 * waiting for a lock PostgreSQL re-checks the row, so of concurrent refreshes with one token exactly
 * one finds it current. `lock` chooses what a locked session means: `wait` for its turn (one rotation:
 * one row lock cannot deadlock), or `skip` it (a batch never waits, so it can never be part of a
 * deadlock with another statement that changes several sessions; what it skips is tried alone).
 */
const rotation = (lock: 'wait' | 'skip') =>
  preparedStatement(
    `sessions.rotate-refresh-tokens-${lock}`,
    `WITH req AS (
       ${unnestRows(ROTATION_COLUMNS)}
     ), locked AS (
       SELECT id FROM sessions
        WHERE id IN (SELECT session_id FROM req) AND revoked_at IS NULL AND expires_at > now()
        FOR NO KEY UPDATE${lock === 'skip' ? ' SKIP LOCKED' : ''}
     ), live AS (${livePrincipalsWhere('s.id IN (SELECT id FROM locked)', { keyPolicy: true })}
     ), rotated AS (
       -- The same token twice in one batch matches one session twice: it is updated once, for one of them.
       UPDATE sessions
          SET refresh_jti = req.new_jti,
              refresh_expires_at = LEAST(to_timestamp(req.issued_at + req.refresh_ttl), sessions.expires_at),
              scope = COALESCE(req.scope, sessions.scope),
              -- Bound by the statement that spends the unbound token, so no unbound refresh token of it is left.
              dpop_jkt = COALESCE(sessions.dpop_jkt, req.dpop_jkt)
         FROM req JOIN live ON live.session_id = req.session_id AND live.principal_id = req.principal_id
        WHERE sessions.id = req.session_id AND sessions.refresh_jti = req.presented_jti
          AND (sessions.dpop_jkt IS NULL OR sessions.dpop_jkt = req.dpop_jkt)
          -- A key's refresh token works only from an address its policy allows; refused, it stays unused.
          AND ${addressAllowed('live.networks', 'req.address')}
        RETURNING req.ord, req.client_address, req.request_id, req.route,
                  live.session_id, live.type, live.principal_id, live.name, live.role, live.permissions, live.not_after,
                  sessions.scope, sessions.client_id, sessions.id_token_client, ${timesOf('sessions')}
     ), audit AS (
       ${auditInsertFrom('(SELECT * FROM rotated ORDER BY ord) AS rotated', {
         type: 'token.issued',
         ...principalColumns('rotated'),
         ...originColumnsOf('rotated'),
         details: "jsonb_build_object('route', rotated.route, 'session_id', rotated.session_id)",
       })}
     )
     SELECT rotated.session_id, rotated.type, rotated.principal_id, rotated.name, rotated.role, rotated.scope,
            rotated.permissions, rotated.not_after,
            rotated.client_id, rotated.id_token_client, rotated.refresh_expires_at, rotated.created_at
       FROM req LEFT JOIN rotated USING (ord)
      ORDER BY req.ord`,
  );

const ROTATE = { wait: rotation('wait'), skip: rotation('skip') };

/**
 * Rotates in one statement; one answer per rotation, in order: undefined where nothing was rotated
 * (already used, not live, or with `lock: 'skip'` locked by another transaction).
 */
export async function rotateRefreshTokens(
  q: Queryable,
  rotations: RefreshRotation[],
  lock: 'wait' | 'skip' = 'skip',
): Promise<(RotatedRefresh | undefined)[]> {
  type Rotated = LivePrincipalRow & LiveKeyPolicy & SessionTimes & { client_id: string | null; id_token_client: boolean };
  const { rows } = await q.queryPrepared<{ [K in keyof Rotated]: Rotated[K] | null }>(ROTATE[lock], unnestValues(ROTATION_COLUMNS, rotations));
  return rows.map(({ refresh_expires_at, created_at, client_id, id_token_client, ...principal }) =>
    principal.session_id === null || refresh_expires_at === null || created_at === null
      ? undefined
      : {
          principal: principal as LivePrincipalRow & LiveKeyPolicy,
          times: { refresh_expires_at, created_at },
          client: { id: client_id, idToken: id_token_client === true },
        },
  );
}
