import { UnauthorizedError } from '../shared/errors';
import type { Database } from '../db/database';
import { effectiveScopes, type Principal } from '../shared/principals';
import type { TokenSigner } from '../signing-keys/token-signer';
import { findLivePrincipal, type SessionRead } from '../sessions/liveness';

const livenessOnly: SessionRead<undefined> = async (q, sessionId) => ({ live: await findLivePrincipal(q, sessionId), alongside: undefined });

/**
 * Turns an access token into a Principal: the signature and claims must hold, and the session and
 * principal behind it must still be live (so regen, delete, disable and revocation act at once).
 * The role comes from the database, not the token, so a role change applies on the next call; the
 * scopes are the token's own, within its session's and the role's.
 */
export class BearerAuthenticator {
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
  ) {}

  async authenticate(accessToken: string): Promise<Principal> {
    return (await this.authenticateReading(accessToken, livenessOnly)).principal;
  }

  /**
   * authenticate(), with `read` also fetching what a route needs in the liveness check's statement;
   * nothing of it is returned to a dead session. Only for a read that earns its place in
   * docs/performance.md (see api-keys/key-read-along.ts).
   */
  async authenticateReading<T>(accessToken: string, read: SessionRead<T>): Promise<{ principal: Principal; alongside: T }> {
    const claims = await this.signer.verify(accessToken, 'Bearer');
    const { live, alongside } = await read(this.db, claims.sid);
    if (!live || live.principal_id !== claims.sub) throw new UnauthorizedError('Access token is no longer valid');
    return {
      principal: {
        type: live.type,
        id: live.principal_id,
        name: live.name,
        role: live.role,
        sessionId: live.session_id,
        scopes: effectiveScopes(live.role, live.scope, typeof claims.scope === 'string' ? claims.scope : ''),
      },
      alongside,
    };
  }
}
