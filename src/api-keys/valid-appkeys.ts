import type { Database } from '../db/database';
import type { SecretBox } from '../crypto/secretbox';
import { ExpiringMap, type ExpiringMapLimits } from '../cache/expiring-map';
import { policyOf } from '../key-policies/policy-sql';
import type { KeyPolicy } from '../key-policies/policy';
import { findApiKeySecretByAppname } from './api-keys.repository';
import { sha256 } from '../crypto/digest';

/** An appkey that may prove a credential right now, with the generation sessions it opens get. */
export interface ValidAppkey {
  /**
   * The appkey in the clear, for a request token's HMAC; null for a key imported from another system,
   * whose secret the service never held: it proves only a credential that presents the secret itself.
   */
  appkey: string | null;
  /** SHA-256 of the appkey: what a presented secret is compared with. */
  digest: Buffer;
  generation: number;
}

/**
 * What an exchange needs of a key before it writes: which row, and the appkeys that may verify. No
 * role: a kept entry may be older than a role change, and what a key may do is read where it is used.
 */
export interface KeyAppkeys {
  id: string;
  appname: string;
  /** The current appkey first; then the previous one while its grace lasts. */
  appkeys: ValidAppkey[];
  /** The key's policy as read with the appkeys: a login admitted by it is confirmed by its write (policy.version). */
  policy: KeyPolicy;
  /**
   * Read from the database for this attempt (true), or kept from an earlier one (false): a kept copy
   * may be stale, so a refusal judged by it is made again with a fresh read before it is told.
   */
  fresh: boolean;
}

/** What `withValidAppkeys` found: no such key, or the attempt's answer. */
export type AppkeyAttempt<T> = { found: false } | { found: true; result: T | undefined };

/**
 * The appkeys, in the clear, that may verify a key's request tokens, and the key's policy. Kept
 * unsealed by appname, so that an exchange usually skips a database round trip and an AES-GCM open
 * (docs/performance.md, "exchange"). A kept entry may be stale, and that is safe: the exchange's write
 * accepts only the key's current id, a generation still valid and the policy version judged, and an
 * attempt that fails (or refuses) with a kept entry is made again with one read afresh. Size and age are bounded so that a deleted key's appkey does not
 * linger. The master key, which opens every appkey, is in this process anyway: no new secret is kept.
 */
export class ValidAppkeys {
  private readonly kept: ExpiringMap<string, KeyAppkeys>;

  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    limits: ExpiringMapLimits = { maxEntries: 10_000, ttlMs: 60_000 },
  ) {
    this.kept = new ExpiringMap(limits);
  }

  /**
   * Runs `attempt` with the key's valid appkeys; an attempt answers undefined when they did not
   * verify or the key turned out changed, and is then run once more with appkeys read afresh.
   */
  async withValidAppkeys<T>(appname: string, attempt: (key: KeyAppkeys) => Promise<T | undefined>): Promise<AppkeyAttempt<T>> {
    const kept = this.kept.get(appname);
    if (kept) {
      const result = await attempt({ ...kept, fresh: false });
      if (result !== undefined) return { found: true, result };
    }
    const fresh = await this.read(appname);
    return fresh ? { found: true, result: await attempt(fresh) } : { found: false };
  }

  /** Drops what this instance keeps of the key (after a regen or delete here; others expire). */
  forget(appname: string): void {
    this.kept.delete(appname);
  }

  private async read(appname: string): Promise<KeyAppkeys | undefined> {
    const row = await findApiKeySecretByAppname(this.db, appname);
    if (!row) {
      this.forget(appname);
      return undefined;
    }
    const appkeys: ValidAppkey[] = [this.unsealed(appname, row.key_ciphertext, row.key_digest, row.key_generation)];
    // A previous appkey in its grace has a ciphertext, a digest, or both (see migration 0023).
    if (row.previous_key_ciphertext || row.previous_key_digest) {
      appkeys.push(this.unsealed(appname, row.previous_key_ciphertext, row.previous_key_digest, row.previous_key_generation));
    }
    const found = { id: row.id, appname, appkeys, policy: policyOf(row), fresh: true };
    this.kept.set(appname, found);
    return found;
  }

  private unsealed(appname: string, sealed: Buffer | null, digest: Buffer | null, generation: number): ValidAppkey {
    const appkey = sealed ? this.box.open(sealed, appname).toString('utf8') : null;
    return { appkey, digest: digest ?? sha256(appkey!), generation };
  }
}
