import { OAuthError } from '../shared/errors';
import { checkedClientId, type TokenParameters } from './token-request';

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** How a client authenticated (RFC 6749 §2.3, RFC 7523 §2.2), or the client it named without authenticating. */
export type ClientAuthentication =
  | { method: 'none'; clientId: string | undefined; /** Named by Basic credentials with an empty password. */ viaBasic?: boolean }
  | { method: 'client_secret_basic' | 'client_secret_post'; clientId: string; secret: string }
  | { method: 'client_secret_jwt'; assertion: string; clientId: string | undefined };

/**
 * The client authentication of a request: `Authorization: Basic` (form-urlencoded client_id and
 * secret), `client_id` and `client_secret` in the body, or a `client_assertion`. An empty secret means
 * none (a public client named by its client_id), as simple-oauth2 and x/oauth2 send it. More than one
 * method is invalid_request (RFC 6749 §2.3).
 */
export function clientAuthenticationOf(authorization: string | undefined, parameters: TokenParameters): ClientAuthentication {
  const basic = basicCredentialsOf(authorization);
  const named = parameters.client_id === undefined ? undefined : checkedClientId(parameters.client_id);
  const secret = parameters.client_secret;
  const assertion = assertionOf(parameters);
  if ([basic?.secret, secret, assertion].filter((given) => given !== undefined && given !== '').length > 1) {
    throw new OAuthError('invalid_request', 'Use one client authentication method');
  }
  if (basic) {
    if (named !== undefined && named !== basic.clientId) throw new OAuthError('invalid_request', 'client_id differs from the Basic credentials');
    if (basic.secret !== '') return { method: 'client_secret_basic', ...basic };
    // An empty Basic password is no authentication: a secret or assertion in the body is then the one method, and is checked.
    if (secret === undefined && assertion === undefined) return { method: 'none', clientId: basic.clientId, viaBasic: true };
  }
  const clientId = named ?? basic?.clientId;
  if (secret !== undefined) {
    if (clientId === undefined) throw new OAuthError('invalid_request', 'client_secret needs client_id');
    return { method: 'client_secret_post', clientId, secret };
  }
  if (assertion !== undefined) return { method: 'client_secret_jwt', assertion, clientId };
  return { method: 'none', clientId };
}

function assertionOf(parameters: TokenParameters): string | undefined {
  const { client_assertion: assertion, client_assertion_type: type } = parameters;
  if (assertion === undefined && type === undefined) return undefined;
  if (type !== CLIENT_ASSERTION_TYPE) throw new OAuthError('invalid_request', `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`);
  if (assertion === undefined) throw new OAuthError('invalid_request', 'Parameter client_assertion is required');
  return assertion;
}

/** RFC 6749 §2.3.1: base64 of the form-urlencoded client_id, a colon, the form-urlencoded secret. Other schemes are not ours. */
function basicCredentialsOf(authorization: string | undefined): { clientId: string; secret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(authorization ?? '');
  if (!match) {
    if (/^Basic\b/i.test(authorization ?? '')) throw new OAuthError('invalid_client', 'Malformed Basic credentials', { basicChallenge: true });
    return undefined;
  }
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw new OAuthError('invalid_client', 'Malformed Basic credentials', { basicChallenge: true });
  try {
    return { clientId: checkedClientId(formDecoded(decoded.slice(0, colon))), secret: formDecoded(decoded.slice(colon + 1)) };
  } catch (err) {
    if (err instanceof OAuthError) throw err;
    throw new OAuthError('invalid_client', 'Malformed Basic credentials', { basicChallenge: true });
  }
}

const formDecoded = (text: string) => decodeURIComponent(text.replaceAll('+', ' '));
