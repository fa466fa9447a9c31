import type { Database } from '../../db/database';
import type { ApiKeyLogins } from '../../sessions/api-key-logins';
import type { KeyAppkeys, ValidAppkeys } from '../../api-keys/valid-appkeys';
import { DpopProofError, LoginRefusedError, OAuthError } from '../../shared/errors';
import type { CheckedProof } from '../../dpop/dpop';
import { replayRecordOf } from '../../dpop/proof-replay';
import type { RequestOrigin } from '../../shared/audit-context';
import { recordingRefusals } from '../failed-logins';
import { claimedAppname, type RequestTokenRules } from '../request-token';
import { provedBy, spendProofWork, type KeyCredential } from '../appkey-proof';
import type { TokenIssuer } from '../token-issuer';
import type { KeyAdmissions, KeyAuthentication } from '../key-admission';
import type { OAuthTokenResponse } from '../tokens.responses';

/** What a login of an API key asks for beyond its credential. */
export interface ApiKeyTokenRequest {
  /** Checked within the key's role as the login's statement reads it; undefined: all the role grants. */
  scope?: string;
  /** No refresh token for client credentials (RFC 6749 §4.4.3). */
  refreshToken: boolean;
  /** The service's own route keeps the ID token it always gave; the token endpoint gives one only to a user. */
  idToken: boolean;
  /** The request's DPoP proof, checked: the login spends it, and the session's tokens are bound to its key. */
  dpop?: CheckedProof;
}

/**
 * An API key's login: POST /api/v1/auth/token (a request token), and on the token endpoint the
 * jwt-bearer grant (the same) and client credentials (the key authenticates as the client).
 */
export class ApiKeyGrant {
  constructor(
    private readonly db: Database,
    private readonly issuer: TokenIssuer,
    private readonly appkeys: ValidAppkeys,
    private readonly logins: ApiKeyLogins,
    private readonly routeRules: RequestTokenRules,
    private readonly admissions: KeyAdmissions,
  ) {}

  /** POST /api/v1/auth/token: a request token signed with an appkey opens a session of its API key. */
  exchange(requestToken: string, origin: RequestOrigin): Promise<OAuthTokenResponse> {
    return this.login(null, { requestToken, rules: this.routeRules }, origin, { refreshToken: true, idToken: true });
  }

  /**
   * Opens a session of the API key `appname` (for a request token, null: the appname it claims).
   * Every refusal of the credential reads the same, so appnames cannot be probed; a key whose
   * credential checked out may then be refused by its policy, which says why (KeyAuthentication).
   */
  login(appname: string | null, credential: KeyCredential, origin: RequestOrigin, request: ApiKeyTokenRequest): Promise<OAuthTokenResponse> {
    let claimed = appname;
    return recordingRefusals(this.db, origin, () => ({ appname: claimed }), async () => {
      claimed ??= 'requestToken' in credential ? claimedAppname(credential.requestToken) : null;
      if (claimed === null) throw new LoginRefusedError('Invalid client credentials', 'unknown_api_key');
      const authentication = this.admissions.begin(origin);
      const attempt = await this.appkeys.withValidAppkeys(claimed, (key) => this.open(key, credential, authentication, origin, request));
      const refused = 'requestToken' in credential ? 'Invalid request token' : 'Invalid client credentials';
      if (!attempt.found) {
        spendProofWork(claimed, credential);
        throw new LoginRefusedError(refused, 'unknown_api_key');
      }
      // Not proved by any of the key's valid appkeys, or the key changed (deleted, regenerated) meanwhile.
      if (attempt.result === undefined) throw new LoginRefusedError(refused, 'requestToken' in credential ? 'invalid_request_token' : 'invalid_client_secret');
      return attempt.result;
    });
  }

  /**
   * Undefined when none of these appkeys proves the credential, or the key changed since they were
   * read, or a kept copy of its policy refused it: nothing was written, and a fresh read is tried.
   */
  private async open(
    key: KeyAppkeys,
    credential: KeyCredential,
    authentication: KeyAuthentication,
    origin: RequestOrigin,
    request: ApiKeyTokenRequest,
  ): Promise<OAuthTokenResponse | undefined> {
    const proof = provedBy(key, credential);
    if (!proof) return undefined;
    if (!(await authentication.admit(key))) return undefined;
    const session = this.issuer.newSession(origin);
    const outcome = await this.logins.open({
      ...session,
      apiKeyId: key.id,
      keyGeneration: proof.generation,
      jti: proof.jti,
      jtiExpiresAt: proof.jtiExpiresAt,
      scope: request.scope ?? null,
      dpopJkt: request.dpop?.jkt ?? null,
      dpopProof: request.dpop ? replayRecordOf(request.dpop) : null,
      policyVersion: key.policy.version,
      credits: key.policy.credits !== null,
      policyNow: authentication.now,
    });
    if (!outcome.opened) {
      if (outcome.refused === 'stale') return undefined;
      if (outcome.refused === 'scope') throw new OAuthError('invalid_scope', 'The requested scope is not within what the API key\'s role and permissions grant');
      if (outcome.refused === 'proof_replayed') throw new DpopProofError('The DPoP proof was used before');
      if (outcome.refused === 'usage_exceeded') return authentication.refuseUsage(key);
      throw new LoginRefusedError('Request token has already been used', 'replayed_request_token');
    }
    const subject = { type: 'api_key', id: key.id, name: key.appname, role: outcome.role, permissions: key.policy.permissions, notAfter: outcome.notAfter } as const;
    return this.issuer.issue(
      subject,
      { id: session.id, refreshJti: session.refreshJti, times: outcome.times, now: session.now },
      { scope: request.scope, clientId: key.appname, refreshToken: request.refreshToken, idToken: request.idToken, dpopJkt: request.dpop?.jkt },
    );
  }
}
