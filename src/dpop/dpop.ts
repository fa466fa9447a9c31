import type { Database } from '../db/database';
import type { DpopPresentation } from '../shared/dpop';
import { DpopProofError } from '../shared/errors';
import { nowSeconds } from '../signing-keys/token-signer';
import { ProofChecker, type CheckedProof } from './proof-check';
import { ProofReplay } from './proof-replay';

export type { CheckedProof } from './proof-check';

/**
 * DPoP proofs (RFC 9449) of requests to this service: checked against the request as clients reach
 * it (the issuer's origin and path: what discovery tells them), then spent, once across every
 * instance. Used by the token endpoint (a proof binds the tokens it issues), the refresh routes (a
 * bound session's refresh token needs a proof by its key) and the bearer check (a bound access token
 * needs a proof by its key, with its hash).
 */
export class Dpop {
  private readonly checker = new ProofChecker();
  private readonly replay: ProofReplay;

  constructor(
    db: Database,
    private readonly issuer: string,
  ) {
    this.replay = new ProofReplay(db);
  }

  /**
   * The request's proof, checked but not yet spent; undefined when it sent none. `accessToken`: the
   * token the proof goes with on a resource request (its hash must be in the proof).
   */
  async check(presented: DpopPresentation, accessToken?: string): Promise<CheckedProof | undefined> {
    if (presented.proofs.length === 0) return undefined;
    if (presented.proofs.length > 1) throw new DpopProofError('Send one DPoP header');
    const expected = { method: presented.method, uri: `${this.issuer}${presented.path}`, accessToken };
    return this.checker.check(presented.proofs[0]!, expected, nowSeconds());
  }

  /** Spends a checked proof: refused when any instance saw it before. */
  async spend(proof: CheckedProof): Promise<void> {
    if (!(await this.replay.spend(proof))) throw new DpopProofError('The DPoP proof was used before');
  }

  /** check() then spend(): the key that made the request's proof, or undefined when it sent none. */
  async keyOf(presented: DpopPresentation, accessToken?: string): Promise<string | undefined> {
    const proof = await this.check(presented, accessToken);
    if (proof) await this.spend(proof);
    return proof?.jkt;
  }
}

/** The DPoP key a token of ours is bound to (`cnf.jkt`, RFC 9449 §6.1), or undefined for a bearer token. */
export function boundKeyOf(claims: Record<string, unknown>): string | undefined {
  const cnf = claims.cnf;
  if (typeof cnf !== 'object' || cnf === null) return undefined;
  const jkt = (cnf as Record<string, unknown>).jkt;
  return typeof jkt === 'string' ? jkt : undefined;
}
