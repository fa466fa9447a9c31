import type { Queryable } from '../db/database';
import type { SealedColumn } from '../db/sealed-secrets';

export interface SigningKeyRow {
  kid: string;
  private_key_ciphertext: Buffer;
  public_jwk: Record<string, unknown>;
  created_at: Date;
  retired_at: Date | null;
}

/** The active key and every retired key retired after `publishedSince`. */
export async function findPublishedSigningKeys(q: Queryable, publishedSince: Date): Promise<SigningKeyRow[]> {
  const { rows } = await q.query<SigningKeyRow>(
    `SELECT kid, private_key_ciphertext, public_jwk, created_at, retired_at
       FROM signing_keys
      WHERE retired_at IS NULL OR retired_at > $1
      ORDER BY created_at DESC`,
    [publishedSince],
  );
  return rows;
}

export async function retireActiveSigningKey(q: Queryable): Promise<void> {
  await q.query('UPDATE signing_keys SET retired_at = now() WHERE retired_at IS NULL');
}

export async function insertSigningKey(
  q: Queryable,
  key: { kid: string; privateKeyCiphertext: Buffer; publicJwk: Record<string, unknown> },
): Promise<void> {
  await q.query('INSERT INTO signing_keys (kid, private_key_ciphertext, public_jwk) VALUES ($1, $2, $3)', [
    key.kid,
    key.privateKeyCiphertext,
    JSON.stringify(key.publicJwk),
  ]);
}

export async function hasActiveSigningKey(q: Queryable): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM signing_keys WHERE retired_at IS NULL');
  return rows.length > 0;
}

// Serialises key creation/rotation across instances.
export async function lockSigningKeys(q: Queryable): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock($1)', [7_240_612]);
}

/** Every signing key's sealed private half, locked until the transaction ends. */
/** The private halves of the signing keys, sealed under MASTER_KEY, each bound to its kid (retired ones too: the rewrap keeps them sealed under the current key). */
export const SEALED_SIGNING_KEYS: readonly SealedColumn[] = [{ what: 'signing keys', table: 'signing_keys', column: 'private_key_ciphertext', associatedData: 'kid' }];

export async function lockSealedPrivateKeys(q: Queryable): Promise<Array<{ kid: string; private_key_ciphertext: Buffer }>> {
  const { rows } = await q.query<{ kid: string; private_key_ciphertext: Buffer }>(
    'SELECT kid, private_key_ciphertext FROM signing_keys ORDER BY created_at FOR UPDATE',
  );
  return rows;
}

export async function updateSealedPrivateKey(q: Queryable, kid: string, privateKeyCiphertext: Buffer): Promise<void> {
  await q.query('UPDATE signing_keys SET private_key_ciphertext = $2 WHERE kid = $1', [kid, privateKeyCiphertext]);
}
