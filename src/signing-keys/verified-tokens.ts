import { createHash } from 'node:crypto';
import { ExpiringMap } from '../cache/expiring-map';

/**
 * The ES256 tokens whose signature held, and under which kid, so that a caller presenting its access
 * token for the token's whole life has the signature checked once per instance, not on every request
 * (docs/performance.md, "read"). Only that verdict is kept: the caller parses and judges the claims
 * (exp above all) and the kid's publication on every use, and the session behind the token is still
 * read from the database on every request.
 *
 * Kept by the kind asked for and a SHA-256 digest of the whole token, so that no lookup compares a
 * presented token with a kept one; at most 1,000 of them (a few hundred bytes each; more callers than that per instance only cost verifications), each for at
 * most 5 minutes (the default access-token lifetime; a longer-lived token is simply verified again).
 */
export class VerifiedTokens {
  private readonly kept = new ExpiringMap<string, string>({ maxEntries: 1_000, ttlMs: 5 * 60_000 });

  /** The kid whose key verified this token's signature, if it was verified lately as `kind`. */
  signedBy(token: string, kind: string): string | undefined {
    return this.kept.get(keyOf(token, kind));
  }

  keep(token: string, kind: string, kid: string): void {
    this.kept.set(keyOf(token, kind), kid);
  }

  forget(token: string, kind: string): void {
    this.kept.delete(keyOf(token, kind));
  }
}

const keyOf = (token: string, kind: string) => `${kind} ${createHash('sha256').update(token).digest('base64url')}`;
