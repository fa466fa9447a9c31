import { preparedStatement, type Queryable } from '../db/database';
import { creditsAt } from './policy-sql';

/**
 * A successful use of a key that opens no session (client authentication at revocation, introspection,
 * a password or refresh grant naming the key as its client; verification): `last_used` stamped and
 * `cost` credits spent, in one conditional UPDATE of the key row (the ledger's rule: never below 0,
 * and a cost above what is left spends nothing), only while the key's policy is still the version
 * the use was judged against. A cost of 0 checks the credits without spending.
 */
const SPEND_KEY_USE = preparedStatement(
  'key-policies.spend-key-use',
  `WITH k AS (
     SELECT id, ${creditsAt('api_keys', 'to_timestamp($4)')} AS available
       FROM api_keys WHERE id = $1 AND policy_version = $2
        FOR NO KEY UPDATE
   ), used AS (
     UPDATE api_keys
        SET last_used = GREATEST(api_keys.last_used, to_timestamp($4)),
            credits_remaining = COALESCE(k.available - $3, api_keys.credits_remaining),
            credits_updated_at = CASE WHEN k.available IS NULL THEN api_keys.credits_updated_at
                                      ELSE GREATEST(api_keys.credits_updated_at, to_timestamp($4)) END
       FROM k
      WHERE api_keys.id = k.id AND (k.available IS NULL OR k.available >= $3)
      RETURNING api_keys.credits_remaining
   )
   SELECT EXISTS (SELECT 1 FROM k) AS current, EXISTS (SELECT 1 FROM used) AS used,
          (SELECT credits_remaining FROM used)::float8 AS remaining, (SELECT available FROM k)::float8 AS available`,
);

export type KeyUseOutcome =
  /** Written; `remaining` the credits left after it (null: the key has none). */
  | { used: true; remaining: number | null }
  /** The key's policy changed since it was read (or the key is gone): judge it again with a fresh read. Nothing written. */
  | { used: false; stale: true }
  /** Fewer credits than `cost` left: nothing spent, nothing written. */
  | { used: false; stale: false; available: number };

/** One use of key `keyId` judged against policy `version` at `now` (Unix seconds), costing `cost` credits. */
export async function spendKeyUse(q: Queryable, use: { keyId: string; version: number; cost: number; now: number }): Promise<KeyUseOutcome> {
  type Row = { current: boolean; used: boolean; remaining: number | null; available: number | null };
  const { rows } = await q.queryPrepared<Row>(SPEND_KEY_USE, [use.keyId, use.version, use.cost, use.now]);
  const row = rows[0]!;
  if (row.used) return { used: true, remaining: row.remaining };
  if (!row.current) return { used: false, stale: true };
  return { used: false, stale: false, available: row.available ?? 0 };
}
