import { preparedStatement, type Queryable } from '../db/database';
import type { Role } from '../shared/principals';
import { creditsAt, policyColumns, type PolicyRow } from '../key-policies/policy-sql';
import { livePrincipalsWhere, type LivePrincipalRow } from '../sessions/liveness';
import { previousAppkeyValid, previousGeneration } from '../sessions/appkey-generations';

/** A key as verification reads it: found by the digest of what was presented. */
export interface VerifiedKeyRow extends PolicyRow {
  id: string;
  appname: string;
  role: Role | null;
  /** The appkey generation the digest matched: the current one, or the previous one in its grace. */
  generation: number;
  last_used: number | null;
  /** Credits at the moment asked, after any refill due; null: none. */
  credits: number | null;
}

const columns = (generation: string, now: string) =>
  `id, appname, role, ${generation} AS generation, extract(epoch FROM last_used)::float8 AS last_used,
   ${creditsAt('api_keys', `to_timestamp(${now})`)}::float8 AS credits, ${policyColumns('api_keys')}`;

/**
 * One key by SHA-256 digest `digest` (an SQL expression) at `now` (Unix seconds): the current
 * appkey's (unique index), else the previous appkey's while its grace lasts, as the token routes
 * accept it (partial unique index).
 */
const byDigest = (digest: string, now: string) =>
  `(SELECT ${columns('key_generation', now)} FROM api_keys WHERE key_digest = ${digest})
   UNION ALL
   (SELECT ${columns(previousGeneration('api_keys'), now)} FROM api_keys WHERE previous_key_digest = ${digest} AND ${previousAppkeyValid('api_keys')})
   LIMIT 1`;

const FIND_BY_DIGEST = preparedStatement('verification.find-by-digest', byDigest('$1', '$2'));

export async function findKeyByDigest(q: Queryable, digest: Buffer, now: number): Promise<VerifiedKeyRow | undefined> {
  const { rows } = await q.queryPrepared<VerifiedKeyRow>(FIND_BY_DIGEST, [digest, now]);
  return rows[0];
}

/**
 * The bearer check's liveness statement (session $1 called from $3) with the key of digest $2 at $4
 * beside it: a verification in one round trip (docs/performance.md, "verification"). The key comes
 * as one JSON value, so its columns never clash with the principal's.
 */
const FIND_WITH_LIVE_PRINCIPAL = preparedStatement(
  'verification.find-with-live-principal',
  `SELECT live.*, (SELECT row_to_json(k) FROM (${byDigest('$2::bytea', '$4::float8')}) AS k) AS verified_key
     FROM (${livePrincipalsWhere('s.id = $1', { address: '$3::inet' })}) AS live`,
);

/** Session `sessionId`'s live principal (undefined once it is not live) and, only beside it, the key of `digest` (undefined: none). */
export async function findKeyWithLivePrincipal(
  q: Queryable,
  sessionId: string,
  address: string | null,
  digest: Buffer,
  now: number,
): Promise<{ live: LivePrincipalRow | undefined; alongside: VerifiedKeyRow | undefined }> {
  const { rows } = await q.queryPrepared<LivePrincipalRow & { verified_key: VerifiedKeyRow | null }>(FIND_WITH_LIVE_PRINCIPAL, [sessionId, digest, address, now]);
  const row = rows[0];
  if (!row) return { live: undefined, alongside: undefined };
  const { verified_key, ...live } = row;
  return { live, alongside: verified_key ?? undefined };
}
