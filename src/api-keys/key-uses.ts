import { preparedStatement, type Queryable } from '../db/database';
import type { Role } from '../shared/principals';
import { creditsAt } from '../key-policies/policy-sql';
import { appkeyGenerationValid } from '../sessions/appkey-generations';

/**
 * A successful use of a key that opens no session (client authentication at revocation, introspection,
 * a password or refresh grant naming the key as its client; verification): `last_used` stamped and
 * `cost` credits spent, in one conditional UPDATE of the key row (the ledger's rule: never below 0,
 * and a cost above what is left spends nothing), only while the key's policy is still the version
 * the use was judged against and the appkey generation that proved itself ($5; NULL: not checked) is
 * still valid. A cost of 0 checks the credits without spending (a key at 0 is refused all the same). The key's role comes back as the
 * database holds it now (a kept copy may be older than a role change).
 */
const SPEND_KEY_USE = preparedStatement(
  'api-keys.spend-key-use',
  `WITH k AS (
     SELECT id, role, ${creditsAt('api_keys', 'to_timestamp($4)')} AS available
       FROM api_keys
      WHERE id = $1 AND policy_version = $2 AND ($5::int IS NULL OR ${appkeyGenerationValid('$5::int', 'api_keys')})
        FOR NO KEY UPDATE
   ), used AS (
     UPDATE api_keys
        SET last_used = GREATEST(api_keys.last_used, to_timestamp($4)),
            credits_remaining = COALESCE(k.available - $3, api_keys.credits_remaining),
            credits_updated_at = CASE WHEN k.available IS NULL THEN api_keys.credits_updated_at
                                      ELSE GREATEST(api_keys.credits_updated_at, to_timestamp($4)) END
       FROM k
      WHERE api_keys.id = k.id AND (k.available IS NULL OR k.available >= GREATEST($3, 1))
      RETURNING api_keys.credits_remaining
   )
   SELECT EXISTS (SELECT 1 FROM k) AS current, EXISTS (SELECT 1 FROM used) AS used, (SELECT role FROM k) AS role,
          (SELECT credits_remaining FROM used)::float8 AS remaining, (SELECT available FROM k)::float8 AS available`,
);

export type KeyUseOutcome =
  /** Written; `remaining` the credits left after it (null: the key has none), `role` the key's role now. */
  | { used: true; remaining: number | null; role: Role | null }
  /** The key's policy changed since it was read, the appkey is no longer valid, or the key is gone: judge it again with a fresh read. Nothing written. */
  | { used: false; stale: true }
  /** Fewer credits than `cost` left: nothing spent, nothing written. */
  | { used: false; stale: false; available: number };

/** What a use is judged as: the key, its policy version and appkey generation judged (null: any), the moment (Unix seconds), its cost. */
export interface KeyUse {
  keyId: string;
  version: number;
  generation: number | null;
  cost: number;
  now: number;
}

/** One use of a key, written if it still holds (see SPEND_KEY_USE). */
export async function spendKeyUse(q: Queryable, use: KeyUse): Promise<KeyUseOutcome> {
  type Row = { current: boolean; used: boolean; role: Role | null; remaining: number | null; available: number | null };
  const { rows } = await q.queryPrepared<Row>(SPEND_KEY_USE, [use.keyId, use.version, use.cost, use.now, use.generation]);
  const row = rows[0]!;
  if (row.used) return { used: true, remaining: row.remaining, role: row.role };
  if (!row.current) return { used: false, stale: true };
  return { used: false, stale: false, available: row.available ?? 0 };
}
