import { createHash } from 'node:crypto';
import { ExpiringMap } from '../cache/expiring-map';

export interface VerifiedToken {
  kid: string;
  claims: Readonly<Record<string, unknown>>;
}

/**
 * ES256 tokens whose signature and claims held, so that a caller presenting its access token for the
 * token's whole life has the signature checked once per instance, not on every request
 * (docs/performance.md, "read"). Only the signature's verdict is kept: the caller still judges the
 * claims (exp above all) and the kid's publication on every use, and the session behind the token is
 * still read from the database on every request.
 *
 * Kept by a SHA-256 digest of the whole token, so that no lookup compares a presented token with a
 * kept one; at most 10,000 of them, each for at most 5 minutes (the default access-token lifetime;
 * a longer-lived token is simply verified again).
 */
export class VerifiedTokens {
  private readonly kept = new ExpiringMap<string, VerifiedToken>({ maxEntries: 10_000, ttlMs: 5 * 60_000 });

  find(token: string): VerifiedToken | undefined {
    return this.kept.get(digestOf(token));
  }

  keep(token: string, verified: VerifiedToken): void {
    this.kept.set(digestOf(token), { kid: verified.kid, claims: Object.freeze(verified.claims) });
  }

  forget(token: string): void {
    this.kept.delete(digestOf(token));
  }
}

const digestOf = (token: string) => createHash('sha256').update(token).digest('base64url');
