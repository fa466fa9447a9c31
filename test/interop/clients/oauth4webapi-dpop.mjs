// oauth4webapi (v3), unmodified, with DPoP (RFC 9449) and token exchange (RFC 8693) against the
// running service. Env: ISSUER, APPNAME, APPKEY (an API key of a role with api-keys:read), USERNAME,
// PASSWORD (a user), PUBLIC_CLIENT_ID, DOWNSTREAM_AUDIENCE (a value of the service's EXCHANGE_AUDIENCES).
import { URL } from 'node:url';
import * as oauth from 'oauth4webapi';
import { claimsOf, described, env, outcome, refusal, run } from './common.mjs';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const issuer = new URL(env('ISSUER'));
// Plain http on loopback: every request must say so.
const insecure = { [oauth.allowInsecureRequests]: true };

async function discover() {
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
  return oauth.processDiscoveryResponse(issuer, response);
}

const apiKey = () => ({ client: { client_id: env('APPNAME') }, auth: oauth.ClientSecretBasic(env('APPKEY')) });
const publicClient = { client_id: env('PUBLIC_CLIENT_ID') };

/** A DPoP handle of a fresh key of the client's (EdDSA: Ed25519), as oauth4webapi makes them. */
const dpopHandle = async (client, alg = 'EdDSA') => oauth.DPoP(client, await oauth.generateKeyPair(alg));

async function passwordLogin(as, DPoP) {
  const parameters = { username: env('USERNAME'), password: env('PASSWORD'), scope: 'openid api-keys:read' };
  const response = await oauth.genericTokenEndpointRequest(as, publicClient, oauth.None(), 'password', parameters, { ...insecure, DPoP });
  return oauth.processGenericTokenEndpointResponse(as, publicClient, response);
}

async function refresh(as, refreshToken, DPoP) {
  const response = await oauth.refreshTokenGrantRequest(as, publicClient, oauth.None(), refreshToken, { ...insecure, DPoP });
  return oauth.processRefreshTokenResponse(as, publicClient, response);
}

async function exchange(as, parameters) {
  const { client, auth } = apiKey();
  const response = await oauth.genericTokenEndpointRequest(as, client, auth, TOKEN_EXCHANGE, { subject_token_type: ACCESS_TOKEN_TYPE, ...parameters }, insecure);
  return oauth.processGenericTokenEndpointResponse(as, client, response);
}

await run({
  /** Client credentials with a DPoP proof (EdDSA): a bound token, taken by this service's routes as DPoP with ath. */
  async 'dpop-client-credentials'() {
    const as = await discover();
    const { client, auth } = apiKey();
    const DPoP = await dpopHandle(client, 'EdDSA');
    const response = await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: 'api-keys:read' }, { ...insecure, DPoP });
    const tokens = await oauth.processClientCredentialsResponse(as, client, response);
    const url = new URL(`/api/v1/api-keys/${env('APPNAME')}`, issuer);
    const read = await oauth.protectedResourceRequest(tokens.access_token, 'GET', url, undefined, undefined, { ...insecure, DPoP });
    return { tokens: described(tokens), readStatus: read.status, readAppname: (await read.json()).data?.appname };
  },

  /** A public client's password login with DPoP (RS256 key), refreshed with the same key, then refused with another key, the refresh token not used up. */
  async 'dpop-password-refresh'() {
    const as = await discover();
    const DPoP = await dpopHandle(publicClient, 'RS256');
    const login = await passwordLogin(as, DPoP);
    const anotherKey = await refusal(async () => refresh(as, login.refresh_token, await dpopHandle(publicClient)));
    const refreshed = await refresh(as, login.refresh_token, DPoP);
    const again = await refresh(as, refreshed.refresh_token, DPoP);
    return { login: described(login), anotherKey, refreshed: described(refreshed), again: described(again) };
  },

  /** The API key exchanges the user's token, without and with an actor, as RFC 8693's generic grant. */
  async 'token-exchange'() {
    const as = await discover();
    const user = await passwordLogin(as);
    const { client, auth } = apiKey();
    const own = await oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, auth, {}, insecure));
    const narrowed = await exchange(as, { subject_token: user.access_token, scope: 'api-keys:read', resource: env('DOWNSTREAM_AUDIENCE') });
    const delegated = await exchange(as, { subject_token: user.access_token, actor_token: own.access_token, actor_token_type: ACCESS_TOKEN_TYPE });
    return {
      subject: claimsOf(user.access_token),
      actor: claimsOf(own.access_token),
      narrowed: { ...described(narrowed), issued_token_type: narrowed.issued_token_type },
      delegated: { ...described(delegated), issued_token_type: delegated.issued_token_type },
      // The narrowed token is for the downstream audience, so it can be exchanged again only for that audience.
      widened: await outcome(() => exchange(as, { subject_token: narrowed.access_token, scope: 'api-keys:read api-keys:write', resource: env('DOWNSTREAM_AUDIENCE') })),
    };
  },
});
