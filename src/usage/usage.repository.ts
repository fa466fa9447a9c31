import { preparedStatement, type Queryable } from '../db/database';
import type { UsageCount, UsageKind } from './usage-counter';

/**
 * Adds summed counts to the hourly rows in one statement; the counts of other instances add up
 * (n = n + excluded.n). Only keys that still exist are written (a key deleted since its use is
 * skipped, its rows went with it). Sorted, so two instances flushing at once lock rows in the same
 * order and never deadlock.
 */
const ADD_USAGE = preparedStatement(
  'usage.add',
  `INSERT INTO api_key_usage (api_key_id, hour, kind, n)
   SELECT u.id, to_timestamp(u.hour), u.kind, u.n
     FROM unnest($1::uuid[], $2::float8[], $3::text[], $4::bigint[]) AS u (id, hour, kind, n)
     JOIN api_keys k ON k.id = u.id
    ORDER BY u.id, u.hour, u.kind
   ON CONFLICT (api_key_id, hour, kind) DO UPDATE SET n = api_key_usage.n + excluded.n`,
);

export async function addUsage(q: Queryable, counts: readonly UsageCount[]): Promise<void> {
  if (counts.length === 0) return;
  await q.queryPrepared(ADD_USAGE, [counts.map((c) => c.keyId), counts.map((c) => c.hour), counts.map((c) => c.kind), counts.map((c) => c.n)]);
}

/** Stamps `last_used` of many keys in one statement, never moving it back; in id order, for the same reason as ADD_USAGE. */
const STAMP_LAST_USED = preparedStatement(
  'usage.stamp-last-used',
  `UPDATE api_keys SET last_used = GREATEST(api_keys.last_used, to_timestamp(u.at))
     FROM (SELECT * FROM unnest($1::uuid[], $2::float8[]) AS u (id, at) ORDER BY id) AS u
    WHERE api_keys.id = u.id`,
);

export async function stampLastUsed(q: Queryable, stamps: ReadonlyArray<{ keyId: string; at: number }>): Promise<void> {
  if (stamps.length === 0) return;
  await q.queryPrepared(STAMP_LAST_USED, [stamps.map((s) => s.keyId), stamps.map((s) => s.at)]);
}

/** The key's id by appname; undefined: no such key. */
export async function findKeyId(q: Queryable, appname: string): Promise<string | undefined> {
  const { rows } = await q.query<{ id: string }>('SELECT id FROM api_keys WHERE appname = $1', [appname]);
  return rows[0]?.id;
}

export interface UsageRow {
  start: number;
  kind: UsageKind;
  n: number;
}

/**
 * A key's counts per interval of `size` seconds (3600 or 86400: Unix hours and days are UTC hours
 * and days), for hours from `since` (inclusive, aligned) to `until` (exclusive), oldest first.
 */
export async function findUsage(q: Queryable, keyId: string, size: number, since: number, until: number): Promise<UsageRow[]> {
  const { rows } = await q.query<UsageRow>(
    `SELECT (floor(extract(epoch FROM hour) / $2) * $2)::float8 AS start, kind, sum(n)::float8 AS n
       FROM api_key_usage
      WHERE api_key_id = $1 AND hour >= to_timestamp($3) AND hour < to_timestamp($4)
      GROUP BY 1, 2
      ORDER BY 1, 2`,
    [keyId, size, since, until],
  );
  return rows;
}

/** Deletes at most `batchSize` rows older than `retentionDays`; answers how many. */
export async function pruneUsage(q: Queryable, retentionDays: number, batchSize: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM api_key_usage
      WHERE ctid = ANY (ARRAY(SELECT ctid FROM api_key_usage WHERE hour < now() - make_interval(days => $1) LIMIT $2))`,
    [retentionDays, batchSize],
  );
  return rowCount ?? 0;
}
