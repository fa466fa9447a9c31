import { preparedStatement, type Queryable } from '../db/database';
import type { Role } from '../shared/principals';
import { creditsAt, policyColumns, type PolicyRow } from '../key-policies/policy-sql';
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

const columns = (generation: string) =>
  `id, appname, role, ${generation} AS generation, extract(epoch FROM last_used)::float8 AS last_used,
   ${creditsAt('api_keys', 'to_timestamp($2)')}::float8 AS credits, ${policyColumns('api_keys')}`;

/**
 * One key by SHA-256 digest: the current appkey's (unique index), else the previous appkey's while
 * its grace lasts, as the token routes accept it (partial unique index). One round trip.
 */
const FIND_BY_DIGEST = preparedStatement(
  'verification.find-by-digest',
  `(SELECT ${columns('key_generation')} FROM api_keys WHERE key_digest = $1)
   UNION ALL
   (SELECT ${columns(previousGeneration('api_keys'))} FROM api_keys WHERE previous_key_digest = $1 AND ${previousAppkeyValid('api_keys')})
   LIMIT 1`,
);

export async function findKeyByDigest(q: Queryable, digest: Buffer, now: number): Promise<VerifiedKeyRow | undefined> {
  const { rows } = await q.queryPrepared<VerifiedKeyRow>(FIND_BY_DIGEST, [digest, now]);
  return rows[0];
}
