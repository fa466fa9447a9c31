import type { Request } from 'express';
import { DpopBoundTokenError, DpopProofError, UnauthorizedError } from '../shared/errors';
import type { Database } from '../db/database';
import { boundKeyOf, type Dpop } from '../dpop/dpop';
import type { PresentedAccessToken } from '../http/authenticate';
import { effectiveScopes, type Principal } from '../shared/principals';
import type { TokenSigner } from '../signing-keys/token-signer';
import { findLivePrincipalFrom, type SessionRead } from '../sessions/liveness';
import { clientAddressText } from '../key-policies/addresses';

const livenessOnly: SessionRead<undefined> = async (q, sessionId, address) => ({ live: await findLivePrincipalFrom(q, sessionId, address), alongside: undefined });

/**
 * Turns an access token into a Principal: the signature and claims must hold, a DPoP-bound token
 * must come as `Authorization: DPoP` with a proof by its key (RFC 9449 §7), and the session and
 * principal behind it must still be live (so regen, delete, disable, expiry and revocation act at
 * once), and a key's token must come from an address its policy allows. The role comes from the
 * database, not the token, so a role change applies on the next call; the scopes are the token's
 * own, within its session's and the role's.
 */
export class BearerAuthenticator {
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
    private readonly dpop: Dpop,
  ) {}

  /** `req`: the call, whose client address (as `trust proxy` resolves it) a key's policy must allow. */
  async authenticate(presented: PresentedAccessToken, req?: Request): Promise<Principal> {
    return (await this.authenticateReading(presented, livenessOnly, req)).principal;
  }

  /**
   * authenticate(), with `read` also fetching what a route needs in the liveness check's statement;
   * nothing of it is returned to a dead session. Only for a read that earns its place in
   * docs/performance.md (see api-keys/key-read-along.ts).
   */
  async authenticateReading<T>(presented: PresentedAccessToken, read: SessionRead<T>, req?: Request): Promise<{ principal: Principal; alongside: T }> {
    const claims = await this.signer.verify(presented.token, 'Bearer');
    const proven = await this.proofOf(presented, boundKeyOf(claims));
    // The proof is spent beside the liveness read, not before it: one round trip's wait, not two.
    const [{ live, alongside }] = await Promise.all([read(this.db, claims.sid, clientAddressText(req?.ip)), proven && this.dpop.spend(proven)]);
    if (!live || live.principal_id !== claims.sub) throw new UnauthorizedError('Access token is no longer valid');
    const scope = typeof claims.scope === 'string' ? claims.scope : '';
    return {
      principal: {
        type: live.type,
        id: live.principal_id,
        name: live.name,
        role: live.role,
        sessionId: live.session_id,
        scopes: effectiveScopes(live.role, live.scope, scope),
        token: { scope, expiresAt: claims.exp },
      },
      alongside,
    };
  }

  /**
   * The checked (not yet spent) proof a DPoP-bound token came with; undefined for a bearer token
   * presented as one. A bound token as a bearer token, or a bearer token as a DPoP one, is refused.
   */
  private async proofOf(presented: PresentedAccessToken, bound: string | undefined) {
    if (presented.scheme === 'Bearer') {
      if (bound !== undefined) throw new DpopBoundTokenError('This access token is DPoP-bound: send it as "Authorization: DPoP" with a DPoP proof');
      return undefined;
    }
    if (bound === undefined) throw new UnauthorizedError('This access token is not DPoP-bound: send it as "Authorization: Bearer"');
    const proof = await this.dpop.check(presented.dpop, presented.token);
    if (!proof) throw new DpopProofError('A DPoP proof is required with "Authorization: DPoP"');
    if (proof.jkt !== bound) throw new DpopProofError('The DPoP proof is by another key than the one the access token is bound to');
    return proof;
  }
}
