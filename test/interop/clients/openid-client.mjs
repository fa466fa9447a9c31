// openid-client (v6), unmodified, against the running service: discovery from the issuer URL, then
// each grant and client authentication method it has. Env: ISSUER, APPNAME, APPKEY (an API key of a
// role with api-keys:read), USERNAME, PASSWORD (a user), PUBLIC_CLIENT_ID.
import { randomUUID } from 'node:crypto';
import { TextEncoder } from 'node:util';
import { URL } from 'node:url';
import * as client from 'openid-client';
import * as jose from 'jose';
import { claimsOf, described, env, refusal, run } from './common.mjs';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const issuer = new URL(env('ISSUER'));

/** Discovery from the issuer URL (plain http on loopback, hence allowInsecureRequests). */
const discover = (clientId, secret, auth) => client.discovery(issuer, clientId, secret, auth, { execute: [client.allowInsecureRequests] });

const apiKeyClient = (auth) => discover(env('APPNAME'), env('APPKEY'), auth);
const publicClient = () => discover(env('PUBLIC_CLIENT_ID'), undefined, client.None());

async function clientCredentials(auth) {
  const config = await apiKeyClient(auth);
  const tokens = await client.clientCredentialsGrant(config, { scope: 'api-keys:read' });
  return { tokens: described(tokens), expiresIn: tokens.expiresIn() };
}

/** A request token signed with the appkey: the jwt-bearer assertion. */
async function requestToken(audience) {
  return new jose.SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(env('APPNAME'))
    .setSubject(env('APPNAME'))
    .setAudience(audience)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(env('APPKEY')));
}

await run({
  async discovery() {
    const config = await apiKeyClient(client.ClientSecretBasic());
    return { metadata: config.serverMetadata() };
  },

  'client-credentials-basic': () => clientCredentials(client.ClientSecretBasic()),
  'client-credentials-post': () => clientCredentials(client.ClientSecretPost()),
  'client-credentials-jwt': () => clientCredentials(client.ClientSecretJwt()),

  async 'client-credentials-wrong-secret'() {
    const config = await discover(env('APPNAME'), `${env('APPKEY')}x`, client.ClientSecretBasic());
    return { refusal: await refusal(() => client.clientCredentialsGrant(config)) };
  },

  /** Password grant as a public client asking for openid, then refresh twice; the ID token validated by openid-client. */
  async 'password-refresh'() {
    const config = await publicClient();
    const login = await client.genericGrantRequest(config, 'password', { username: env('USERNAME'), password: env('PASSWORD'), scope: 'openid api-keys:read' });
    const refreshed = await client.refreshTokenGrant(config, login.refresh_token);
    const again = await client.refreshTokenGrant(config, refreshed.refresh_token);
    // The first refresh token is spent: presenting it again is the reuse signal.
    const reused = await refusal(() => client.refreshTokenGrant(config, login.refresh_token));
    return {
      login: { ...described(login), validatedIdToken: login.claims() },
      refreshed: { ...described(refreshed), validatedIdToken: refreshed.claims() },
      again: described(again),
      reused,
    };
  },

  /**
   * RFC 7523 jwt-bearer through the generic grant, then refresh. The API key is a confidential client:
   * its appkey authenticates it (RFC 6749 §6: a confidential client authenticates when it refreshes).
   */
  async 'jwt-bearer'() {
    const config = await discover(env('APPNAME'), env('APPKEY'), client.ClientSecretBasic(env('APPKEY')));
    const tokens = await client.genericGrantRequest(config, JWT_BEARER, { assertion: await requestToken(issuer.href.replace(/\/$/, '')) });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
    const tokenEndpointAudience = await client.genericGrantRequest(config, JWT_BEARER, { assertion: await requestToken(config.serverMetadata().token_endpoint) });
    return { tokens: described(tokens), refreshed: described(refreshed), tokenEndpointAudience: described(tokenEndpointAudience) };
  },

  /** Introspection with client_secret_basic (the API key's role grants api-keys:read), then revocation. */
  async 'introspect-revoke'() {
    const keyConfig = await apiKeyClient(client.ClientSecretBasic());
    const userConfig = await publicClient();
    const login = await client.genericGrantRequest(userConfig, 'password', { username: env('USERNAME'), password: env('PASSWORD'), scope: 'openid api-keys:read' });

    const accessBefore = await client.tokenIntrospection(keyConfig, login.access_token);
    const refreshBefore = await client.tokenIntrospection(keyConfig, login.refresh_token, { token_type_hint: 'refresh_token' });
    // Revocation as the public client (RFC 7009: by possession), of the refresh token: the session ends.
    await client.tokenRevocation(userConfig, login.refresh_token, { token_type_hint: 'refresh_token' });
    const accessAfter = await client.tokenIntrospection(keyConfig, login.access_token);
    const refreshAfter = await refusal(() => client.refreshTokenGrant(userConfig, login.refresh_token));

    // Revocation with client_secret_basic, of an access token obtained by client credentials.
    const own = await client.clientCredentialsGrant(keyConfig);
    await client.tokenRevocation(keyConfig, own.access_token, { token_type_hint: 'access_token' });
    const ownAfter = await client.tokenIntrospection(keyConfig, own.access_token);

    const wrongSecret = await discover(env('APPNAME'), `${env('APPKEY')}x`, client.ClientSecretBasic());
    const introspectWrongSecret = await refusal(() => client.tokenIntrospection(wrongSecret, login.access_token));
    return { accessBefore, refreshBefore, accessAfter, refreshAfter, ownAfter, introspectWrongSecret, sid: claimsOf(login.access_token).sid };
  },
});
