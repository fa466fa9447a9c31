import { UnauthorizedError } from '../errors';
import type { Database } from '../db/database';
import type { Principal } from './roles';
import type { TokenSigner } from './jwt';
import { findLivePrincipal } from '../sessions/sessions.repository';

/**
 * Turns an access token into a Principal: the signature and claims must hold, and the session and
 * principal behind it must still be live (so regen, delete, disable and revocation act at once).
 * The role comes from the database, not the token, so a role change applies on the next call.
 */
export class BearerAuthenticator {
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
  ) {}

  async authenticate(accessToken: string): Promise<Principal> {
    const claims = await this.signer.verify(accessToken, 'Bearer');
    const live = await findLivePrincipal(this.db, claims.sid);
    if (!live || live.principal_id !== claims.sub) throw new UnauthorizedError('Access token is no longer valid');
    return { type: live.type, id: live.principal_id, name: live.name, role: live.role, sessionId: live.session_id };
  }
}
