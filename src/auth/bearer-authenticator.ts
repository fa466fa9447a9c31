import { UnauthorizedError } from '../errors';
import type { Database, Queryable } from '../db/database';
import type { Principal } from './roles';
import type { TokenSigner } from './jwt';
import { findLivePrincipal, type LivePrincipalRow } from '../sessions/sessions.repository';

/**
 * The liveness check of session `sessionId` (its principal's row, or undefined), with whatever else
 * a route reads in the same statement: a database round trip costs more than the rest of a read.
 */
export type SessionRead<T> = (q: Queryable, sessionId: string) => Promise<{ live: LivePrincipalRow | undefined; alongside: T }>;

const livenessOnly: SessionRead<undefined> = async (q, sessionId) => ({ live: await findLivePrincipal(q, sessionId), alongside: undefined });

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
    return (await this.authenticateReading(accessToken, livenessOnly)).principal;
  }

  /** authenticate(), with `read` also fetching what the route needs; nothing of it is returned to a dead session. */
  async authenticateReading<T>(accessToken: string, read: SessionRead<T>): Promise<{ principal: Principal; alongside: T }> {
    const claims = await this.signer.verify(accessToken, 'Bearer');
    const { live, alongside } = await read(this.db, claims.sid);
    if (!live || live.principal_id !== claims.sub) throw new UnauthorizedError('Access token is no longer valid');
    return {
      principal: { type: live.type, id: live.principal_id, name: live.name, role: live.role, sessionId: live.session_id },
      alongside,
    };
  }
}
