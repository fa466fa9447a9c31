import type { Queryable } from '../db/database';
import { previousAppkeyValid } from '../sessions/appkey-generations';

/** A key found by the digest of a presented or reported secret. */
export interface KeyByDigest {
  id: string;
  appname: string;
  enabled: boolean;
  disabled_reason: string | null;
  /** Past its expires_at at the moment asked about. */
  expired: boolean;
  /** The digest of its current key. */
  key_digest: Buffer;
  /** The digest of its previous key, only while that key's grace lasts. */
  previous_key_digest: Buffer | null;
}

/**
 * The keys whose current key, or previous key within its grace, has one of `digests` (SHA-256), at
 * `now` (Unix seconds), locked until the transaction ends so that a concurrent change of the key
 * waits. The same statement for a known and an unknown secret: one index lookup per digest.
 */
export async function lockKeysByDigests(q: Queryable, digests: readonly Buffer[], now: number): Promise<KeyByDigest[]> {
  const { rows } = await q.query<KeyByDigest>(
    `SELECT id, appname, enabled, disabled_reason,
            COALESCE(expires_at <= to_timestamp($2::float8), false) AS expired,
            key_digest,
            CASE WHEN ${previousAppkeyValid('api_keys')} THEN previous_key_digest END AS previous_key_digest
       FROM api_keys
      WHERE key_digest = ANY($1::bytea[])
         OR (previous_key_digest = ANY($1::bytea[]) AND ${previousAppkeyValid('api_keys')})
      ORDER BY id
      FOR UPDATE`,
    [digests, now],
  );
  return rows;
}

/** The key of `rows` that `digest` names, if any. */
export function keyWithDigest(rows: readonly KeyByDigest[], digest: Buffer): KeyByDigest | undefined {
  return rows.find((k) => k.key_digest.equals(digest) || k.previous_key_digest?.equals(digest));
}
