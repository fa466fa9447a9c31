import type { ApiKeyGrant } from '../tokens/grants/api-key.grant';
import type { PasswordGrant } from '../tokens/grants/password.grant';
import type { RefreshGrant } from '../tokens/grants/refresh.grant';
import { TOKEN_EXCHANGE_GRANT, type TokenExchangeGrant } from '../tokens/grants/token-exchange.grant';
import type { CheckedProof, Dpop } from '../dpop/dpop';
import type { DpopPresentation } from '../shared/dpop';
import type { AuthenticatedClient, ClientSecrets } from '../tokens/client-secrets';
import type { RequestTokenRules } from '../tokens/request-token';
import type { OAuthTokenResponse } from '../tokens/tokens.responses';
import { AppError, DpopProofError, LoginRefusedError, OAuthError, UnauthorizedError } from '../shared/errors';
import type { RequestOrigin } from '../shared/audit-context';
import { claimedAppname } from '../tokens/request-token';
import { clientAuthenticationOf, type ClientAuthentication } from './client-authentication';
import { checkedScope, required, tokenParametersOf, type TokenParameters } from './token-request';

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const GRANT_TYPES = ['password', 'refresh_token', 'client_credentials', JWT_BEARER_GRANT, TOKEN_EXCHANGE_GRANT] as const;

export interface TokenEndpointDeps {
  apiKey: ApiKeyGrant;
  password: PasswordGrant;
  refresh: RefreshGrant;
  exchange: TokenExchangeGrant;
  clients: ClientSecrets;
  /** DPoP proofs of token requests (RFC 9449 §5): a proof binds what the request is issued. */
  dpop: Dpop;
  /** Request tokens as client libraries send them: up to 3600 s, aud the issuer or this endpoint. */
  assertionRules: RequestTokenRules;
  /** Which client_id a password or refresh grant may name. */
  clientIds: ClientIdRules;
}

export interface ClientIdRules {
  /** Named without authenticating: DEFAULT_CLIENT_ID and PUBLIC_CLIENT_IDS. */
  public: ReadonlySet<string>;
  /** Never a client: AUDIENCE and the issuer (an ID token for it would pass for an access token). */
  refused: ReadonlySet<string>;
}

/**
 * POST /oauth2/token (RFC 6749 §3.2): one endpoint for every grant, over the same grants as the
 * service's own routes. Refusals are RFC 6749 §5.2 errors: a refused credential of the grant is
 * invalid_grant, a refused client invalid_client.
 */
export class TokenEndpoint {
  constructor(private readonly deps: TokenEndpointDeps) {}

  /** `dpop`: the request's DPoP header fields; a proof there, checked and spent, binds the tokens issued to its key. */
  async token(authorization: string | undefined, body: unknown, dpop: DpopPresentation, origin: RequestOrigin): Promise<OAuthTokenResponse> {
    const parameters = tokenParametersOf(body);
    const client = clientAuthenticationOf(authorization, parameters);
    const scope = checkedScope(parameters.scope);
    const grantType = required(parameters, 'grant_type');
    if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw new OAuthError('unsupported_grant_type', `grant_type must be one of ${GRANT_TYPES.join(', ')}`);
    }
    const proof = await refusedAs('invalid_grant', () => this.deps.dpop.check(dpop));
    const request: GrantRequest = { parameters, client, scope, origin, proof, dpopJkt: proof?.jkt };
    switch (grantType as (typeof GRANT_TYPES)[number]) {
      case 'password':
        return this.password(request);
      case 'refresh_token':
        return this.refresh(request);
      case 'client_credentials':
        return this.clientCredentials(request);
      case JWT_BEARER_GRANT:
        return this.jwtBearer(request);
      case TOKEN_EXCHANGE_GRANT:
        return this.exchange(request);
    }
  }

  private async password({ parameters, client, scope, origin, proof, dpopJkt }: GrantRequest) {
    const username = required(parameters, 'username');
    const password = required(parameters, 'password');
    const clientId = await this.clientOf(client, origin);
    await this.spend(proof);
    return refusedAs('invalid_grant', () => this.deps.password.login(username, password, origin, { scope, clientId: clientId ?? null, dpopJkt }));
  }

  private async refresh({ parameters, client, scope, origin, proof, dpopJkt }: GrantRequest) {
    const refreshToken = required(parameters, 'refresh_token');
    const clientId = await this.clientOf(client, origin);
    await this.spend(proof);
    return refusedAs('invalid_grant', () => this.deps.refresh.refresh(refreshToken, origin, { scope, clientId }, dpopJkt));
  }

  /** The API key is the client; the response has no refresh token (RFC 6749 §4.4.3). */
  private clientCredentials({ client, scope, origin, proof }: GrantRequest) {
    // The login spends the proof in its own statement: one commit for both.
    const request = { scope, refreshToken: false, idToken: false, dpop: proof };
    const basic = client.method === 'client_secret_basic';
    if (client.method === 'client_secret_basic' || client.method === 'client_secret_post') {
      return refusedAs('invalid_client', () => this.deps.apiKey.login(client.clientId, { secret: client.secret }, origin, request), basic);
    }
    if (client.method === 'client_secret_jwt') {
      const credential = { requestToken: client.assertion, rules: this.deps.assertionRules };
      return refusedAs('invalid_client', () => this.deps.apiKey.login(client.clientId ?? null, credential, origin, request));
    }
    // RFC 6749 §5.2: a client that tried Basic (here with an empty password) gets the Basic challenge.
    throw new OAuthError('invalid_client', 'client_credentials needs client authentication', { basicChallenge: client.method === 'none' && client.viaBasic === true });
  }

  /** RFC 7523 §2.1: a request token as the grant; the same as the API-key route, refresh token included. */
  private async jwtBearer({ parameters, client, scope, origin, proof }: GrantRequest) {
    const assertion = required(parameters, 'assertion');
    // The assertion names its key; a client_id beside it is the client libraries' habit, not a claim to
    // check. Credentials sent must be right; the key that is its own client is judged and charged once,
    // by its login below.
    if (client.method === 'client_secret_basic' || client.method === 'client_secret_post') {
      const sameKey = client.clientId === claimedAppnameOrUndefined(assertion);
      const basic = client.method === 'client_secret_basic';
      await refusedAs('invalid_client', () => (sameKey ? this.deps.clients.confirmSecret(client.clientId, client.secret, origin) : this.deps.clients.verify(client.clientId, client.secret, origin)), basic);
    } else if (client.method !== 'none') {
      await verifiedClient(this.deps.clients, client, origin);
    }
    const credential = { requestToken: assertion, rules: this.deps.assertionRules };
    return refusedAs('invalid_grant', () => this.deps.apiKey.login(null, credential, origin, { scope, refreshToken: true, idToken: false, dpop: proof }));
  }

  /**
   * RFC 8693: a live access token of this service for a narrower one. Client authentication is
   * optional (a public client may exchange); an authenticated client, or a public one by name, is the
   * new token's client, else the subject token's.
   */
  private async exchange({ parameters, client, scope, origin, proof, dpopJkt }: GrantRequest) {
    const { audience, resource } = parameters;
    if (audience !== undefined && resource !== undefined) throw new OAuthError('invalid_request', 'Send one audience or one resource, not both');
    const clientId = await this.clientOf(client, origin);
    await this.spend(proof);
    const request = {
      subjectToken: required(parameters, 'subject_token'),
      subjectTokenType: required(parameters, 'subject_token_type'),
      actorToken: parameters.actor_token,
      actorTokenType: parameters.actor_token_type,
      requestedTokenType: parameters.requested_token_type,
      scope,
      target: audience ?? resource,
      clientId,
      dpopJkt,
    };
    return refusedAs('invalid_grant', () => this.deps.exchange.exchange(request, origin));
  }

  /** Spends the request's proof before a grant that changes anything: refused when any instance saw it before. */
  private async spend(proof: CheckedProof | undefined): Promise<void> {
    if (proof) await refusedAs('invalid_grant', () => this.deps.dpop.spend(proof));
  }

  /**
   * The client a password or refresh grant is for: none named, a public client by its client_id, or
   * an API key that authenticated with its secret. Anything else is invalid_client: a client_id is an
   * ID token's audience, so it must be one the service knows.
   */
  private async clientOf(client: ClientAuthentication, origin: RequestOrigin): Promise<string | undefined> {
    const { public: publicClients, refused } = this.deps.clientIds;
    if (client.method === 'none') {
      if (client.clientId === undefined) return undefined;
      if (publicClients.has(client.clientId)) return client.clientId;
      throw new OAuthError('invalid_client', 'Unknown client: name a public client, or authenticate as an API key with its secret', {
        basicChallenge: client.viaBasic === true,
      });
    }
    const appname = (await verifiedClient(this.deps.clients, client, origin))?.appname;
    if (appname !== undefined && refused.has(appname)) {
      throw new OAuthError('invalid_client', 'This client id is the audience or issuer of access tokens, and cannot be a client');
    }
    return appname;
  }
}

/** One token request, its parameters read and its DPoP proof checked, on its way to its grant. */
interface GrantRequest {
  parameters: TokenParameters;
  client: ClientAuthentication;
  scope: string | undefined;
  origin: RequestOrigin;
  /** The request's DPoP proof, checked but not yet spent; undefined: none was sent. */
  proof: CheckedProof | undefined;
  /** Its key: what the grant's tokens are bound to. */
  dpopJkt: string | undefined;
}

/**
 * The API key a request authenticated as with its appkey (client_secret_basic or client_secret_post),
 * undefined when it sent no credentials; invalid_client when they are wrong.
 */
export async function verifiedClient(clients: ClientSecrets, client: ClientAuthentication, origin: RequestOrigin): Promise<AuthenticatedClient | undefined> {
  if (client.method === 'none') return undefined;
  if (client.method === 'client_secret_jwt') throw new OAuthError('invalid_request', 'client_assertion is accepted with grant_type=client_credentials only');
  const basic = client.method === 'client_secret_basic';
  return refusedAs('invalid_client', () => clients.verify(client.clientId, client.secret, origin), basic);
}

/** The appname a request token claims, or undefined when it is malformed (its login refuses it then). */
function claimedAppnameOrUndefined(token: string): string | undefined {
  try {
    return claimedAppname(token);
  } catch {
    return undefined;
  }
}

/**
 * A grant's refusals as RFC 6749 §5.2 has them: a refused credential (a LoginRefusedError, still
 * counted by the failed-login limits through its cause), a refused token, or a bad value.
 */
export async function refusedAs<T>(code: 'invalid_grant' | 'invalid_client', grant: () => Promise<T>, basicChallenge = false): Promise<T> {
  try {
    return await grant();
  } catch (err) {
    if (err instanceof OAuthError) throw err;
    // RFC 9449 §5: a bad proof, or one by another key than the tokens', is 400 invalid_dpop_proof here.
    if (err instanceof DpopProofError) throw new OAuthError('invalid_dpop_proof', err.message, { cause: err });
    if (err instanceof LoginRefusedError || err instanceof UnauthorizedError) {
      throw new OAuthError(code, err.message, { basicChallenge: code === 'invalid_client' && basicChallenge, cause: err });
    }
    if (err instanceof AppError && err.status === 400) throw new OAuthError('invalid_request', err.message, { cause: err });
    throw err;
  }
}
