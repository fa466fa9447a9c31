import type { Request } from 'express';
import { UnauthorizedError } from '../shared/errors';
import type { Database } from '../db/database';
import { effectiveScopes, type Principal } from '../shared/principals';
import type { TokenSigner } from '../signing-keys/token-signer';
import { findLivePrincipalFrom, type SessionRead } from '../sessions/liveness';
import { clientAddressText } from '../key-policies/addresses';

const livenessOnly: SessionRead<undefined> = async (q, sessionId, address) => ({ live: await findLivePrincipalFrom(q, sessionId, address), alongside: undefined });

/**
 * Turns an access token into a Principal: the signature and claims must hold, and the session and
 * principal behind it must still be live (so regen, delete, disable, expiry and revocation act at
 * once), and a key's token must come from an address its policy allows. The role comes from the
 * database, not the token, so a role change applies on the next call.
 */
export class BearerAuthenticator {
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
  ) {}

  /** `req`: the call, whose client address (as `trust proxy` resolves it) a key's policy must allow. */
  async authenticate(accessToken: string, req?: Request): Promise<Principal> {
    return (await this.authenticateReading(accessToken, livenessOnly, req)).principal;
  }

  /**
   * authenticate(), with `read` also fetching what a route needs in the liveness check's statement;
   * nothing of it is returned to a dead session. Only for a read that earns its place in
   * docs/performance.md (see api-keys/key-read-along.ts).
   */
  async authenticateReading<T>(accessToken: string, read: SessionRead<T>, req?: Request): Promise<{ principal: Principal; alongside: T }> {
    const claims = await this.signer.verify(accessToken, 'Bearer');
    const { live, alongside } = await read(this.db, claims.sid, clientAddressText(req?.ip));
    if (!live || live.principal_id !== claims.sub) throw new UnauthorizedError('Access token is no longer valid');
    return {
      principal: {
        type: live.type,
        id: live.principal_id,
        name: live.name,
        role: live.role,
        sessionId: live.session_id,
        scopes: effectiveScopes(live.role, live.scope),
        token: { scope: typeof claims.scope === 'string' ? claims.scope : '', expiresAt: claims.exp },
      },
      alongside,
    };
  }
}
