import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, type TestApiKey, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { assertionOf, JWT_BEARER, OAUTH2, post, tokenRequest } from './support';

const ISSUER = 'http://issuer.test';

describe('POST /oauth2/token: ID tokens (OpenID Connect) only for an end user’s login by a named client asking for openid', () => {
  let t: TestApp;
  let user: TestUser;
  let key: TestApiKey;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'console-app' });
    user = await createUser(t, { role: 'viewer' });
    key = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const login = (extra: Record<string, string>) => tokenRequest(t, { grant_type: 'password', ...user, ...extra });
  const refresh = (refreshToken: string, extra: Record<string, string> = {}) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra });

  it('when a named client logs a user in with scope openid, then an ID token an OpenID library validates for that client, with the listed claims', async () => {
    const res = await login({ scope: 'openid api-keys:read', client_id: 'console-app' });

    const jwks = createLocalJWKSet((await t.http().get('/.well-known/jwks.json')).body);
    const { payload } = await jwtVerify(res.body.id_token, jwks, { issuer: ISSUER, audience: 'console-app', algorithms: ['ES256'] });
    const access = claimsOf(res.body.access_token);
    expect(payload).toEqual(
      expect.objectContaining({
        iss: ISSUER,
        sub: access.sub,
        aud: 'console-app',
        azp: 'console-app',
        iat: expect.any(Number),
        exp: expect.any(Number),
        sid: res.body['session-state'],
        preferred_username: user.username,
      }),
    );
    expect(payload.exp!).toBeGreaterThan(payload.iat!);
    expect(access.aud).toBe(ISSUER);
  });

  it('when a named client logs a user in with scope openid and refreshes, then each access token’s header is typed at+jwt and each ID token’s JWT (RFC 9068 §2.1)', async () => {
    const res = await login({ scope: 'openid api-keys:read', client_id: 'console-app' });
    const refreshed = await refresh(res.body.refresh_token, { client_id: 'console-app' });

    for (const body of [res.body, refreshed.body]) {
      expect(decodeProtectedHeader(body.access_token)).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
      expect(decodeProtectedHeader(body.id_token)).toEqual({ alg: 'ES256', typ: 'JWT', kid: expect.any(String) });
    }
  });

  it.each([
    ['the login asks no scope', { client_id: 'console-app' }],
    ['the login names no client_id', { scope: 'openid api-keys:read' }],
    ['the scope lacks openid', { scope: 'api-keys:read', client_id: 'console-app' }],
  ])('when %s, then there is no ID token', async (_, extra) => {
    const res = await login(extra);

    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('id_token');
  });

  it('when an API key logs in by client_credentials or jwt-bearer asking for openid, then there is no ID token: no end user is present', async () => {
    const clientCredentials = await tokenRequest(t, { grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey, scope: 'openid' });
    const jwtBearer = await tokenRequest(t, { grant_type: JWT_BEARER, assertion: assertionOf(key), scope: 'openid', client_id: key.appname });

    expect(clientCredentials.status).toBe(200);
    expect(clientCredentials.body).not.toHaveProperty('id_token');
    expect(jwtBearer.status).toBe(200);
    expect(jwtBearer.body).not.toHaveProperty('id_token');
  });

  it('when the session is refreshed without scope, then it keeps its ID token, for the same client and session', async () => {
    const first = await login({ scope: 'openid api-keys:read', client_id: 'console-app' });

    const res = await refresh(first.body.refresh_token);

    expect(claimsOf(res.body.id_token)).toEqual(expect.objectContaining({ aud: 'console-app', azp: 'console-app', sid: first.body['session-state'] }));
  });

  it('when a refresh asks a scope without openid, then the ID token is dropped, and stays dropped', async () => {
    const first = await login({ scope: 'openid api-keys:read', client_id: 'console-app' });

    const narrowed = await refresh(first.body.refresh_token, { scope: 'api-keys:read' });
    const later = await refresh(narrowed.body.refresh_token);

    expect(narrowed.status).toBe(200);
    expect(narrowed.body).not.toHaveProperty('id_token');
    expect(later.body).not.toHaveProperty('id_token');
  });

  it('when a session opened without an ID token is refreshed asking for openid, then it still gets none', async () => {
    const first = await login({ client_id: 'console-app' });

    const res = await refresh(first.body.refresh_token, { scope: 'openid' });

    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('id_token');
  });

  it('when the service’s own routes log in, then their ID tokens are for DEFAULT_CLIENT_ID (a user) or the appname (a key), never the access tokens’ audience', async () => {
    const userTokens = await loginAs(t, user);
    const keyTokens = await loginWithApiKey(t, key);

    expect(claimsOf(userTokens.id_token)).toEqual(expect.objectContaining({ aud: 'public', azp: 'public' }));
    expect(claimsOf(keyTokens.id_token)).toEqual(expect.objectContaining({ aud: key.appname, azp: key.appname }));
    expect(claimsOf(userTokens.access_token)).toEqual(expect.objectContaining({ aud: ISSUER, client_id: 'public' }));
    expect(claimsOf(keyTokens.access_token)).toEqual(expect.objectContaining({ aud: ISSUER, client_id: key.appname }));
  });

  it('when an ID token is sent as a bearer token, then 401: only access tokens are accepted', async () => {
    const res = await login({ scope: 'openid api-keys:read', client_id: 'console-app' });

    const call = await t.http().get('/api/v1/api-keys').set(bearer(res.body.id_token));

    expect(call.status).toBe(401);
  });
});

describe('AUDIENCE and DEFAULT_CLIENT_ID', () => {
  const AUDIENCE = 'https://api.example';
  let t: TestApp;
  let user: TestUser;
  let key: TestApiKey;

  beforeAll(async () => {
    t = await startTestApp({ AUDIENCE, DEFAULT_CLIENT_ID: 'console', PUBLIC_CLIENT_IDS: 'cli' });
    user = await createUser(t, { role: 'viewer' });
    key = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const listKeys = (accessToken: string) => t.http().get('/api/v1/api-keys').set(bearer(accessToken));

  it('when a user logs in on the own route, then the access token is for AUDIENCE and DEFAULT_CLIENT_ID, the ID token for the client, and the bearer check accepts it', async () => {
    const tokens = await loginAs(t, user);

    expect(claimsOf(tokens.access_token)).toEqual(expect.objectContaining({ aud: AUDIENCE, client_id: 'console', iss: ISSUER }));
    expect(claimsOf(tokens.id_token)).toEqual(expect.objectContaining({ aud: 'console', azp: 'console' }));
    expect((await listKeys(tokens.access_token)).status).toBe(200);
  });

  it('when a user logs in at the token endpoint without a client_id, then the access token names DEFAULT_CLIENT_ID; with one, that client', async () => {
    const unnamed = await tokenRequest(t, { grant_type: 'password', ...user });
    const named = await tokenRequest(t, { grant_type: 'password', ...user, client_id: 'cli', scope: 'openid api-keys:read' });

    expect(claimsOf(unnamed.body.access_token)).toEqual(expect.objectContaining({ aud: AUDIENCE, client_id: 'console' }));
    expect(claimsOf(named.body.access_token)).toEqual(expect.objectContaining({ aud: AUDIENCE, client_id: 'cli' }));
    expect(claimsOf(named.body.id_token).aud).toBe('cli');
    expect((await listKeys(named.body.access_token)).status).toBe(200);
  });

  it('when an API key logs in on any route, then its access tokens are for AUDIENCE and the bearer check accepts them; its ID token is for the appname', async () => {
    const own = await loginWithApiKey(t, key);
    const clientCredentials = await tokenRequest(t, { grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey });

    expect(claimsOf(own.access_token)).toEqual(expect.objectContaining({ aud: AUDIENCE, client_id: key.appname }));
    expect(claimsOf(own.id_token).aud).toBe(key.appname);
    expect(claimsOf(clientCredentials.body.access_token)).toEqual(expect.objectContaining({ aud: AUDIENCE, client_id: key.appname }));
    expect((await listKeys(clientCredentials.body.access_token)).status).toBe(200);
  });

  it('when tokens for AUDIENCE are refreshed, revoked and introspected, then each works', async () => {
    const first = await tokenRequest(t, { grant_type: 'password', ...user });

    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    const introspected = await post(t, OAUTH2.introspect, { token: refreshed.body.access_token }, { authorization: `Bearer ${refreshed.body.access_token}` });
    const revoked = await post(t, OAUTH2.revoke, { token: refreshed.body.refresh_token });

    expect(refreshed.status).toBe(200);
    expect(introspected.body).toEqual(expect.objectContaining({ active: true, aud: AUDIENCE }));
    expect(revoked.status).toBe(200);
    expect((await listKeys(refreshed.body.access_token)).status).toBe(401);
  });
});
