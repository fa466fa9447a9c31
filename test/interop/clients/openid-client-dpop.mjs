// openid-client (v6), unmodified, with DPoP (RFC 9449) and token exchange (RFC 8693) against the
// running service. Env: ISSUER, APPNAME, APPKEY (an API key of a role with api-keys:read), USERNAME,
// PASSWORD (a user), PUBLIC_CLIENT_ID, DOWNSTREAM_AUDIENCE (a value of the service's EXCHANGE_AUDIENCES).
import { URL } from 'node:url';
import * as client from 'openid-client';
import { claimsOf, described, env, outcome, refusal, run } from './common.mjs';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const issuer = new URL(env('ISSUER'));

/** Discovery from the issuer URL (plain http on loopback, hence allowInsecureRequests). */
const discover = (clientId, secret, auth) => client.discovery(issuer, clientId, secret, auth, { execute: [client.allowInsecureRequests] });
const apiKeyClient = () => discover(env('APPNAME'), env('APPKEY'), client.ClientSecretBasic());
const publicClient = () => discover(env('PUBLIC_CLIENT_ID'), undefined, client.None());

/** A DPoP handle of a fresh key of the client's, as openid-client makes them. */
const dpopHandle = async (config, alg = 'ES256') => client.getDPoPHandle(config, await client.randomDPoPKeyPair(alg));

/** GET the API key's own record with the access token: through openid-client's DPoP-aware fetch, and as a plain bearer token. */
async function readKey(config, accessToken, DPoP) {
  const url = new URL(`/api/v1/api-keys/${env('APPNAME')}`, issuer);
  const viaDpop = await outcome(async () => (await client.fetchProtectedResource(config, accessToken, url, 'GET', undefined, undefined, { DPoP })).status);
  const asBearer = await globalThis.fetch(url, { headers: { authorization: `Bearer ${accessToken}` } });
  return { viaDpop, asBearer: { status: asBearer.status, challenge: asBearer.headers.get('www-authenticate') } };
}

const passwordParameters = () => ({ username: env('USERNAME'), password: env('PASSWORD'), scope: 'openid api-keys:read' });

await run({
  /** Client credentials with a DPoP proof (ES256): a bound token, taken by this service's routes as DPoP and refused as a bearer token. */
  async 'dpop-client-credentials'() {
    const config = await apiKeyClient();
    const DPoP = await dpopHandle(config, 'ES256');
    const tokens = await client.clientCredentialsGrant(config, { scope: 'api-keys:read' }, { DPoP });
    return { tokens: described(tokens), ...(await readKey(config, tokens.access_token, DPoP)) };
  },

  /** A public client's password login with DPoP, refreshed with the same key, then refused with another, the refresh token not used up. */
  async 'dpop-password-refresh'() {
    const config = await publicClient();
    const DPoP = await dpopHandle(config);
    const login = await client.genericGrantRequest(config, 'password', passwordParameters(), { DPoP });
    const withoutProof = await refusal(() => client.refreshTokenGrant(config, login.refresh_token));
    const anotherKey = await refusal(async () => client.refreshTokenGrant(config, login.refresh_token, undefined, { DPoP: await dpopHandle(config) }));
    const refreshed = await client.refreshTokenGrant(config, login.refresh_token, undefined, { DPoP });
    return {
      login: { ...described(login), validatedIdToken: login.claims() },
      withoutProof,
      anotherKey,
      refreshed: described(refreshed),
    };
  },

  /** The API key (a confidential client) exchanges the user's token for a narrower one for a downstream service, without and with itself as the actor. */
  async 'token-exchange'() {
    const user = await client.genericGrantRequest(await publicClient(), 'password', passwordParameters());
    const config = await apiKeyClient();
    const own = await client.clientCredentialsGrant(config);
    const exchange = (parameters) =>
      client.genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: user.access_token, subject_token_type: ACCESS_TOKEN_TYPE, ...parameters });
    const narrowed = await exchange({ scope: 'api-keys:read', audience: env('DOWNSTREAM_AUDIENCE') });
    const delegated = await exchange({ actor_token: own.access_token, actor_token_type: ACCESS_TOKEN_TYPE, scope: 'api-keys:read' });
    return {
      subject: claimsOf(user.access_token),
      actor: claimsOf(own.access_token),
      narrowed: { ...described(narrowed), issued_token_type: narrowed.issued_token_type },
      delegated: { ...described(delegated), issued_token_type: delegated.issued_token_type },
      unknownAudience: await refusal(() => exchange({ audience: 'https://unknown.example' })),
    };
  },
});
