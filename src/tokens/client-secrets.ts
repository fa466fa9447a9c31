import type { Database } from '../db/database';
import type { ValidAppkeys } from '../api-keys/valid-appkeys';
import { findRoleOfValidGeneration } from '../api-keys/api-keys.repository';
import { LoginRefusedError } from '../shared/errors';
import type { RequestOrigin } from '../shared/audit-context';
import type { Role } from '../shared/principals';
import { provedBy, spendProofWork } from './appkey-proof';
import { recordingRefusals } from './failed-logins';

/** An API key that authenticated as a client. */
export interface AuthenticatedClient {
  id: string;
  appname: string;
  role: Role | null;
}

/**
 * An API key authenticating as an OAuth client with its appkey as the client secret
 * (client_secret_basic or client_secret_post) where no session is opened for it: revocation,
 * introspection, and a password or refresh grant that names its client. A wrong secret and an
 * unknown client are the same refusal, recorded as login.failed.
 *
 * The appkeys may be kept ones (see ValidAppkeys): the appkey that proved itself is confirmed still
 * valid, and the key's role read, from the database, so neither a regen nor a role change on
 * another instance is missed.
 */
export class ClientSecrets {
  constructor(
    private readonly db: Database,
    private readonly appkeys: ValidAppkeys,
  ) {}

  verify(clientId: string, secret: string, origin: RequestOrigin): Promise<AuthenticatedClient> {
    return recordingRefusals(this.db, origin, () => ({ appname: clientId }), async () => {
      const attempt = await this.appkeys.withValidAppkeys(clientId, async (key) => {
        const proof = provedBy(key, { secret });
        const current = proof && (await findRoleOfValidGeneration(this.db, key.id, proof.generation));
        return current && { id: key.id, appname: key.appname, role: current.role };
      });
      if (!attempt.found) {
        spendProofWork(clientId, { secret });
        throw new LoginRefusedError('Invalid client credentials', 'unknown_api_key');
      }
      if (!attempt.result) throw new LoginRefusedError('Invalid client credentials', 'invalid_client_secret');
      return attempt.result;
    });
  }
}
