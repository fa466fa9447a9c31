import { createHash } from 'node:crypto';
import { ExpiringMap } from '../cache/expiring-map';

/**
 * The ES256 tokens whose signature held, and under which kid, so that a caller presenting its access
 * token for the token's whole life has the signature checked once per instance, not on every request
 * (docs/performance.md, "read"). Only that verdict is kept: the caller parses and judges the claims
 * (exp above all) and the kid's publication on every use, and the session behind the token is still
 * read from the database on every request.
 *
 * Kept by the kind asked for and a SHA-256 digest of the whole token (`keyFor`, computed once per
 * verification), so that no lookup compares a presented token with a kept one; at most 1,000 of them
 * (a few hundred bytes each; more callers than that per instance only cost verifications), each for
 * at most 5 minutes (the default access-token lifetime; a longer-lived token is simply verified again).
 */
export class VerifiedTokens {
  private readonly kept = new ExpiringMap<string, string>({ maxEntries: 1_000, ttlMs: 5 * 60_000 });

  keyFor(token: string, kind: string): string {
    return `${kind} ${createHash('sha256').update(token).digest('base64url')}`;
  }

  /** The kid whose key verified the token of `key`'s signature, if it was verified lately. */
  signedBy(key: string): string | undefined {
    return this.kept.get(key);
  }

  keep(key: string, kid: string): void {
    this.kept.set(key, kid);
  }

  forget(key: string): void {
    this.kept.delete(key);
  }
}
