import type { Database } from '../db/database';
import type { ValidAppkeys } from '../api-keys/valid-appkeys';
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
 */
export class ClientSecrets {
  constructor(
    private readonly db: Database,
    private readonly appkeys: ValidAppkeys,
  ) {}

  verify(clientId: string, secret: string, origin: RequestOrigin): Promise<AuthenticatedClient> {
    return recordingRefusals(this.db, origin, () => ({ appname: clientId }), async () => {
      const attempt = await this.appkeys.withValidAppkeys(clientId, async (key) => (provedBy(key, { secret }) ? key : undefined));
      if (!attempt.found) {
        spendProofWork(clientId, { secret });
        throw new LoginRefusedError('Invalid client credentials', 'unknown_api_key');
      }
      if (!attempt.result) throw new LoginRefusedError('Invalid client credentials', 'invalid_client_secret');
      const { id, appname, role } = attempt.result;
      return { id, appname, role };
    });
  }
}
