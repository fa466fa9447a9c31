import type { Database } from '../db/database';
import type { KeyAppkeys, ValidAppkeys } from '../api-keys/valid-appkeys';
import type { KeyUses } from '../api-keys/key-use-batches';
import { LoginRefusedError } from '../shared/errors';
import type { RequestOrigin } from '../shared/audit-context';
import type { Role } from '../shared/principals';
import { provedBy, spendProofWork } from './appkey-proof';
import { recordingRefusals } from './failed-logins';
import type { KeyAdmissions, KeyAuthentication } from './key-admission';

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
 * unknown client are the same refusal, recorded as login.failed. A right secret is an authentication
 * of the key like any other: judged by its policy, and on success it costs a credit and stamps
 * `last_used`.
 *
 * The appkeys and policy may be kept ones (see ValidAppkeys): that one write also confirms the appkey
 * that proved itself is still valid and the policy judged still the key's, and reads the key's role,
 * so neither a regen nor a role or policy change on another instance is missed.
 */
export class ClientSecrets {
  constructor(
    private readonly db: Database,
    private readonly appkeys: ValidAppkeys,
    private readonly admissions: KeyAdmissions,
    private readonly uses: KeyUses,
  ) {}

  verify(clientId: string, secret: string, origin: RequestOrigin): Promise<AuthenticatedClient> {
    const authentication = this.admissions.begin(origin);
    return this.proved(clientId, secret, origin, (key, secretOf) => this.authenticate(key, secretOf, authentication));
  }

  /**
   * The secret checked, and nothing more: for a request whose grant is itself an authentication of the
   * same key (jwt-bearer by the key as its own client), which judges and charges the key once. The
   * answer has no role: it is not read.
   */
  confirmSecret(clientId: string, secret: string, origin: RequestOrigin): Promise<AuthenticatedClient> {
    return this.proved(clientId, secret, origin, async (key) => (provedBy(key, { secret }) ? { id: key.id, appname: key.appname, role: null } : undefined));
  }

  /** The uniform refusals (recorded as login.failed) around `attempt`, which answers undefined for a wrong secret or a changed key. */
  private proved(
    clientId: string,
    secret: string,
    origin: RequestOrigin,
    attemptWith: (key: KeyAppkeys, secret: string) => Promise<AuthenticatedClient | undefined>,
  ): Promise<AuthenticatedClient> {
    return recordingRefusals(this.db, origin, () => ({ appname: clientId }), async () => {
      const attempt = await this.appkeys.withValidAppkeys(clientId, (key) => attemptWith(key, secret));
      if (!attempt.found) {
        spendProofWork(clientId, { secret });
        throw new LoginRefusedError('Invalid client credentials', 'unknown_api_key');
      }
      if (!attempt.result) throw new LoginRefusedError('Invalid client credentials', 'invalid_client_secret');
      return attempt.result;
    });
  }

  /** Undefined when the secret is not one of these appkeys, or the key (or its policy) changed since they were read. */
  private async authenticate(key: KeyAppkeys, secret: string, authentication: KeyAuthentication): Promise<AuthenticatedClient | undefined> {
    const proof = provedBy(key, { secret });
    if (!proof) return undefined;
    if (!(await authentication.admit(key))) return undefined;
    const outcome = await this.uses.spend({ keyId: key.id, version: key.policy.version, generation: proof.generation, cost: 1, now: authentication.now });
    if (outcome.used) return { id: key.id, appname: key.appname, role: outcome.role };
    if (outcome.stale) return undefined;
    return authentication.refuseUsage(key);
  }
}
