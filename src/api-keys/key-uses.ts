import { preparedStatement, type Queryable } from '../db/database';
import { unnestRows, unnestValues, type UnnestColumn } from '../db/unnest';
import type { Role } from '../shared/principals';
import { creditsAt } from '../key-policies/policy-sql';
import { appkeyGenerationValid } from '../sessions/appkey-generations';

/** What a use is judged as: the key, its policy version and appkey generation judged (null: any), the moment (Unix seconds), its cost. */
export interface KeyUse {
  keyId: string;
  version: number;
  generation: number | null;
  cost: number;
  now: number;
}

export type KeyUseOutcome =
  /** Written; `remaining` the credits left after it (null: the key has none), `role` the key's role now. */
  | { used: true; remaining: number | null; role: Role | null }
  /** The key's policy changed since it was read, the appkey is no longer valid, or the key is gone: judge it again with a fresh read. Nothing written. */
  | { used: false; stale: true }
  /** Fewer credits than `cost` left: nothing spent, nothing written. */
  | { used: false; stale: false; available: number };

const USE_COLUMNS: UnnestColumn<KeyUse>[] = [
  { name: 'key_id', type: 'uuid', of: (u) => u.keyId },
  { name: 'policy_version', type: 'int', of: (u) => u.version },
  { name: 'generation', type: 'int', of: (u) => u.generation },
  { name: 'cost', type: 'int', of: (u) => u.cost },
  { name: 'used_at', type: 'float8', of: (u) => u.now },
];

/**
 * Successful uses of keys that open no session (client authentication at revocation, introspection,
 * a password or refresh grant naming the key as its client; verification), any number in one
 * statement and one commit, which is most of what a lone use costs. Per use: `last_used` stamped
 * and `cost` credits spent by the ledger's rule (never below 0; a cost above what is left spends
 * nothing; a key at 0 is refused even to a cost of 0, which only checks), only while the key's policy
 * is still the version the use was judged against and the appkey generation that proved itself
 * (NULL: not checked) is still valid; otherwise the use is stale and writes nothing. The key's role
 * comes back as the database holds it now (a kept copy may be older than a role change).
 *
 * The rows are locked first, in id order, as the logins' statement locks them: two batches cannot
 * deadlock, and credits read from the locked row are exact across instances.
 *
 * A batch is exactly its uses run one after another in batch order. Whether a use fits depends on
 * what the uses before it spent, and a refused one spends nothing, so a later, smaller use of the
 * same key may still fit: a running sum cannot say so, hence the walk (`walk`), one use of each key
 * per step, carrying the key's credits as the previous use left them. A refill is computed at each
 * use's own moment from that carried state, as one statement per use computed it, rather than once
 * at the batch's latest moment as the logins' statement does: a use judged just before a refill
 * boundary is charged to the period it was judged in, not to the next one's fresh amount, so the
 * batch stays exactly its uses one after another even across a boundary. It costs nothing extra: the
 * walk visits each use anyway.
 */
const SPEND_KEY_USES = preparedStatement(
  'api-keys.spend-key-uses',
  `WITH RECURSIVE req AS (
     ${unnestRows(USE_COLUMNS)}
   ), locked AS (
     SELECT id, role, key_generation, previous_key_valid_until, policy_version,
            credits_remaining, credits_refill_amount, credits_refill_interval, credits_updated_at
       FROM api_keys WHERE id IN (SELECT key_id FROM req)
      ORDER BY id FOR NO KEY UPDATE
   ), valid AS (
     SELECT req.*, row_number() OVER (PARTITION BY req.key_id ORDER BY req.ord) AS nth
       FROM req JOIN locked ON locked.id = req.key_id
      WHERE locked.policy_version = req.policy_version
        AND (req.generation IS NULL OR ${appkeyGenerationValid('req.generation', 'locked')})
   ), walk AS (
     -- Step 0 of each key is its row as locked; step n is its n-th valid use, applied to step n-1.
     SELECT id AS key_id, 0::bigint AS nth, NULL::bigint AS ord, NULL::float8 AS used_at,
            credits_remaining, credits_refill_amount, credits_refill_interval, credits_updated_at,
            NULL::bigint AS available, NULL::boolean AS used
       FROM locked
     UNION ALL
     SELECT w.key_id, v.nth, v.ord, v.used_at,
            CASE WHEN s.fits THEN s.available - v.cost ELSE w.credits_remaining END,
            w.credits_refill_amount, w.credits_refill_interval,
            CASE WHEN s.fits AND s.available IS NOT NULL THEN GREATEST(w.credits_updated_at, to_timestamp(v.used_at))
                 ELSE w.credits_updated_at END,
            s.available, s.fits
       FROM walk AS w
       JOIN valid AS v ON v.key_id = w.key_id AND v.nth = w.nth + 1
      CROSS JOIN LATERAL (
        SELECT a.available, a.available IS NULL OR a.available >= GREATEST(v.cost, 1) AS fits
          FROM (SELECT ${creditsAt('w', 'to_timestamp(v.used_at)')} AS available) AS a
      ) AS s
   ), spent AS (
     SELECT key_id, max(used_at) AS last_at FROM walk WHERE used GROUP BY key_id
   ), final AS (
     SELECT DISTINCT ON (key_id) key_id, credits_remaining, credits_updated_at FROM walk ORDER BY key_id, nth DESC
   ), written AS (
     UPDATE api_keys
        SET last_used = GREATEST(api_keys.last_used, to_timestamp(spent.last_at)),
            credits_remaining = final.credits_remaining,
            credits_updated_at = final.credits_updated_at
       FROM spent JOIN final USING (key_id)
      WHERE api_keys.id = spent.key_id
   )
   SELECT valid.ord IS NOT NULL AS current, COALESCE(walk.used, false) AS used, locked.role,
          walk.credits_remaining::float8 AS remaining, walk.available::float8 AS available
     FROM req
     LEFT JOIN valid USING (ord)
     LEFT JOIN walk ON walk.ord = req.ord
     LEFT JOIN locked ON locked.id = valid.key_id
    ORDER BY req.ord`,
);

/** The uses, all in one statement (see SPEND_KEY_USES); one outcome per use, in order. */
export async function spendKeyUses(q: Queryable, uses: KeyUse[]): Promise<KeyUseOutcome[]> {
  type Row = { current: boolean; used: boolean; role: Role | null; remaining: number | null; available: number | null };
  const { rows } = await q.queryPrepared<Row>(SPEND_KEY_USES, unnestValues(USE_COLUMNS, uses));
  return rows.map((row): KeyUseOutcome => {
    if (row.used) return { used: true, remaining: row.remaining, role: row.role };
    if (!row.current) return { used: false, stale: true };
    return { used: false, stale: false, available: row.available ?? 0 };
  });
}
