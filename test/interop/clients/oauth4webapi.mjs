// oauth4webapi (v3), unmodified, against the running service: RFC 8414 discovery from the issuer URL,
// then each grant and client authentication method, revocation, introspection, and its RFC 9068
// resource-server check. Env: ISSUER, APPNAME, APPKEY (an API key of a role with api-keys:read),
// USERNAME, PASSWORD (a user), PUBLIC_CLIENT_ID.
import { randomUUID } from 'node:crypto';
import { TextEncoder } from 'node:util';
import { URL } from 'node:url';
import * as oauth from 'oauth4webapi';
import * as jose from 'jose';
import { described, env, outcome, refusal, run } from './common.mjs';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const issuer = new URL(env('ISSUER'));
// Plain http on loopback: every request must say so.
const insecure = { [oauth.allowInsecureRequests]: true };

async function discover() {
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
  return oauth.processDiscoveryResponse(issuer, response);
}

const apiKey = () => ({ client: { client_id: env('APPNAME') }, secret: env('APPKEY') });
const publicClient = { client_id: env('PUBLIC_CLIENT_ID') };

async function clientCredentials(as, client, auth) {
  const response = await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: 'api-keys:read' }, insecure);
  return oauth.processClientCredentialsResponse(as, client, response);
}

async function passwordLogin(as) {
  const parameters = { username: env('USERNAME'), password: env('PASSWORD'), scope: 'openid api-keys:read' };
  const response = await oauth.genericTokenEndpointRequest(as, publicClient, oauth.None(), 'password', parameters, insecure);
  return oauth.processGenericTokenEndpointResponse(as, publicClient, response);
}

async function refresh(as, client, refreshToken, auth = oauth.None()) {
  const response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, insecure);
  return oauth.processRefreshTokenResponse(as, client, response);
}

async function introspect(as, token) {
  const { client, secret } = apiKey();
  const response = await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic(secret), token, insecure);
  return oauth.processIntrospectionResponse(as, client, response);
}

await run({
  async discovery() {
    return { metadata: await discover() };
  },

  async 'client-credentials'() {
    const as = await discover();
    const { client, secret } = apiKey();
    return {
      basic: described(await clientCredentials(as, client, oauth.ClientSecretBasic(secret))),
      post: described(await clientCredentials(as, client, oauth.ClientSecretPost(secret))),
      jwt: described(await clientCredentials(as, client, oauth.ClientSecretJwt(secret))),
      wrongSecret: await refusal(() => clientCredentials(as, client, oauth.ClientSecretPost(`${secret}x`))),
    };
  },

  /** Password grant as a public client asking for openid, then refresh; ID tokens validated by oauth4webapi. */
  async 'password-refresh'() {
    const as = await discover();
    const login = await passwordLogin(as);
    const refreshed = await refresh(as, publicClient, login.refresh_token);
    return {
      login: { ...described(login), validatedIdToken: oauth.getValidatedIdTokenClaims(login) },
      refreshed: { ...described(refreshed), validatedIdToken: oauth.getValidatedIdTokenClaims(refreshed) },
      otherClient: await refusal(() => refresh(as, { client_id: `${env('PUBLIC_CLIENT_ID')}-other` }, refreshed.refresh_token)),
    };
  },

  /** RFC 7523 jwt-bearer through the generic grant (assertion: a request token signed with the appkey), then refresh. */
  async 'jwt-bearer'() {
    const as = await discover();
    const client = { client_id: env('APPNAME') };
    const assertion = await new jose.SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(env('APPNAME'))
      .setAudience(as.token_endpoint)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(env('APPKEY')));
    const response = await oauth.genericTokenEndpointRequest(as, client, oauth.None(), JWT_BEARER, { assertion }, insecure);
    const tokens = await oauth.processGenericTokenEndpointResponse(as, client, response);
    // The API key is a confidential client: it authenticates when it refreshes (RFC 6749 §6).
    const refreshed = await refresh(as, client, tokens.refresh_token, oauth.ClientSecretBasic(env('APPKEY')));
    const replay = await oauth.genericTokenEndpointRequest(as, client, oauth.None(), JWT_BEARER, { assertion }, insecure);
    return {
      tokens: described(tokens),
      refreshed: described(refreshed),
      replayed: await refusal(() => oauth.processGenericTokenEndpointResponse(as, client, replay)),
    };
  },

  /** Introspection with client_secret_basic, revocation with client_secret_post and as a public client. */
  async 'introspect-revoke'() {
    const as = await discover();
    const { client, secret } = apiKey();
    const login = await passwordLogin(as);
    const before = await introspect(as, login.access_token);
    const revoked = await oauth.revocationRequest(as, publicClient, oauth.None(), login.access_token, { additionalParameters: { token_type_hint: 'access_token' }, ...insecure });
    await oauth.processRevocationResponse(revoked);
    const after = await introspect(as, login.access_token);
    const refreshAfter = await refusal(() => refresh(as, publicClient, login.refresh_token));

    const own = await clientCredentials(as, client, oauth.ClientSecretBasic(secret));
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.ClientSecretPost(secret), own.access_token, insecure));
    const ownAfter = await introspect(as, own.access_token);
    const wrongSecret = await refusal(async () =>
      oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.ClientSecretPost(`${secret}x`), login.refresh_token, insecure)),
    );
    return { before, after, refreshAfter, ownAfter, wrongSecret };
  },

  /** oauth4webapi as a resource server: validateJwtAccessToken (RFC 9068 profile) on an access token and an ID token. */
  async 'rfc9068-resource-server'() {
    const as = await discover();
    const login = await passwordLogin(as);
    const check = (token) =>
      oauth.validateJwtAccessToken(as, new globalThis.Request('http://127.0.0.1/resource', { headers: { authorization: `Bearer ${token}` } }), env('AUDIENCE'), insecure);
    return { accessToken: await outcome(() => check(login.access_token)), idToken: await outcome(() => check(login.id_token)) };
  },
});
