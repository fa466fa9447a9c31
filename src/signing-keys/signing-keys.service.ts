import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Database, Queryable } from '../db/database';
import type { SecretBox } from '../crypto/secretbox';
import {
  findPublishedSigningKeys,
  hasActiveSigningKey,
  insertSigningKey,
  lockSealedPrivateKeys,
  lockSigningKeys,
  retireActiveSigningKey,
  updateSealedPrivateKey,
} from './signing-keys.repository';
import type { PublicJwk } from './jwks.responses';

interface ActiveKey {
  kid: string;
  privateKey: KeyObject;
}

interface PublishedKey {
  jwk: PublicJwk;
  publicKey: KeyObject;
  /** Epoch ms; null for the active key. */
  retiredAt: number | null;
}

const RELOAD_INTERVAL_MS = 30_000;
/**
 * An unknown kid reloads the keys at most this often: a fresh key from a rotation elsewhere is seen
 * at once (or within this pause), while tokens with made-up kids cannot make one database read each.
 */
const UNKNOWN_KID_RELOAD_PAUSE_MS = 10_000;

/** RFC 7638 thumbprint: a kid derived from the key itself. */
function thumbprint(jwk: { crv: string; kty: string; x: string; y: string }): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical).digest('base64url');
}

/**
 * Owns the ES256 keys: generated and rotated under an advisory lock, private halves sealed under
 * MASTER_KEY, public halves published as a JWK Set. Other instances pick up a rotation on their
 * next reload (periodic, or on meeting an unknown kid, at most once per 10 seconds).
 */
export class SigningKeysService {
  private active: ActiveKey | undefined;
  private published = new Map<string, PublishedKey>();
  private loadedAt = 0;
  private reloading: Promise<void> | undefined;
  /** When an unknown kid last caused a reload (epoch ms). */
  private unknownKidReloadAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    /** How long a retired key stays published: the longest lifetime of a token it signed, plus leeway. */
    private readonly publishRetiredForSeconds: number,
  ) {}

  /** Creates the first key if there is none, then loads. Safe when several instances start at once. */
  async initialise(): Promise<void> {
    await this.db.withTransaction(async (tx) => {
      await lockSigningKeys(tx);
      if (!(await hasActiveSigningKey(tx))) await insertSigningKey(tx, this.generate());
    });
    await this.reload();
  }

  /** Retires the active key and makes a new one active. Returns the new kid. */
  async rotate(): Promise<string> {
    const key = this.generate();
    await this.db.withTransaction(async (tx) => {
      await lockSigningKeys(tx);
      await retireActiveSigningKey(tx);
      await insertSigningKey(tx, key);
    });
    await this.reload();
    return key.kid;
  }

  /**
   * Re-seals under the current MASTER_KEY every private half still sealed under MASTER_KEY_PREVIOUS
   * (retired keys too: the database keeps them), in the caller's transaction; returns how many.
   */
  async resealPrivateKeys(tx: Queryable): Promise<number> {
    await lockSigningKeys(tx);
    let resealed = 0;
    for (const row of await lockSealedPrivateKeys(tx)) {
      const sealed = this.box.reseal(row.private_key_ciphertext, row.kid);
      if (!sealed) continue;
      await updateSealedPrivateKey(tx, row.kid, sealed);
      resealed++;
    }
    return resealed;
  }

  async signingKey(): Promise<ActiveKey> {
    if (!this.active || Date.now() - this.loadedAt > RELOAD_INTERVAL_MS) await this.reload();
    if (!this.active) throw new Error('No active signing key');
    return this.active;
  }

  /**
   * The public key for a kid. An unknown kid may come from a rotation on another instance, so it
   * triggers a reload (shared by concurrent callers), at most once per UNKNOWN_KID_RELOAD_PAUSE_MS
   * (a reload under way is joined): a fresh key is accepted at once, or within that pause when made-up
   * kids came just before it.
   */
  async publicKey(kid: string): Promise<KeyObject | undefined> {
    if (Date.now() - this.loadedAt > RELOAD_INTERVAL_MS) await this.reload();
    else if (!this.published.has(kid)) await this.reloadForUnknownKid();
    const key = this.published.get(kid);
    return key && this.isPublished(key) ? key.publicKey : undefined;
  }

  private async reloadForUnknownKid(): Promise<void> {
    if (this.reloading) return this.reloading;
    if (Date.now() - this.unknownKidReloadAt < UNKNOWN_KID_RELOAD_PAUSE_MS) return;
    this.unknownKidReloadAt = Date.now();
    await this.reload();
  }

  async jwkSet(): Promise<{ keys: PublicJwk[] }> {
    if (Date.now() - this.loadedAt > RELOAD_INTERVAL_MS) await this.reload();
    return { keys: [...this.published.values()].filter((k) => this.isPublished(k)).map((k) => k.jwk) };
  }

  /** A retired key leaves the set the moment its last token can no longer be valid, not at the next reload. */
  private isPublished(key: PublishedKey): boolean {
    return key.retiredAt === null || key.retiredAt + this.publishRetiredForSeconds * 1000 > Date.now();
  }

  /** Re-reads the keys from the database; concurrent callers share one query. */
  reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async load(): Promise<void> {
    const since = new Date(Date.now() - this.publishRetiredForSeconds * 1000);
    const rows = await findPublishedSigningKeys(this.db, since);
    const activeRow = rows.find((r) => r.retired_at === null);
    this.active = activeRow && {
      kid: activeRow.kid,
      privateKey: createPrivateKey({ key: this.box.open(activeRow.private_key_ciphertext, activeRow.kid), format: 'der', type: 'pkcs8' }),
    };
    this.published = new Map(
      rows.map((r) => {
        const jwk = r.public_jwk as unknown as PublicJwk;
        const publicKey = createPublicKey({ key: { ...jwk }, format: 'jwk' });
        return [jwk.kid, { jwk, publicKey, retiredAt: r.retired_at?.getTime() ?? null }];
      }),
    );
    this.loadedAt = Date.now();
  }

  private generate() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' }) as { kty: 'EC'; crv: 'P-256'; x: string; y: string };
    const kid = thumbprint(jwk);
    const publicJwk: PublicJwk = { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid, alg: 'ES256', use: 'sig' };
    const der = privateKey.export({ format: 'der', type: 'pkcs8' });
    return { kid, publicJwk: { ...publicJwk }, privateKeyCiphertext: this.box.seal(der, kid) };
  }
}
