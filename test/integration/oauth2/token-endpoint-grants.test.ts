import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, type TestApiKey, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { assertionOf, eventsOf, JWT_BEARER, lastLoginOf, LOOPBACK, nowSeconds, sessionOf, tokenRequest, type Encoding } from './support';

const WITH_REFRESH = ['access_token', 'expires_in', 'not-before-policy', 'refresh_expires_in', 'refresh_token', 'scope', 'session-state', 'token_type'];
const WITHOUT_REFRESH = ['access_token', 'expires_in', 'not-before-policy', 'scope', 'session-state', 'token_type'];

/** A successful token response as RFC 6749 §5.1 and the contract have it: exactly these fields, never cached. */
function expectTokenResponse(res: Response, fields: string[]): void {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['pragma']).toBe('no-cache');
  expect(Object.keys(res.body).sort()).toEqual(fields);
  expect(res.body).toEqual(expect.objectContaining({ token_type: 'bearer', expires_in: 300, 'not-before-policy': 0, 'session-state': expect.any(String) }));
}

describe('POST /oauth2/token: the four grants, as a form and as JSON', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'cli' });
    user = await createUser(t, { role: 'editor' });
  });
  afterAll(() => t.close());

  /** The token works as a bearer on the key API. */
  const listKeys = (accessToken: string) => t.http().get('/api/v1/api-keys').set(bearer(accessToken));

  describe.each<Encoding>(['form', 'json'])('as %s', (as) => {
    it('when a user logs in with the password grant, then a token pair for the role’s full scope, a session of the user and a token.issued event of /oauth2/token', async () => {
      const res = await tokenRequest(t, { grant_type: 'password', ...user }, { as });

      expectTokenResponse(res, WITH_REFRESH);
      expect(res.body.scope).toBe('openid api-keys:read api-keys:write');
      expect(res.body.refresh_expires_in).toBe(1800);
      expect(claimsOf(res.body.access_token)).toEqual(expect.objectContaining({ preferred_username: user.username, principal_type: 'user', typ: 'Bearer' }));
      expect((await sessionOf(t, res.body['session-state']))?.user_id).toBe(claimsOf(res.body.access_token).sub);
      expect(await eventsOf(t, res)).toEqual([
        expect.objectContaining({
          type: 'token.issued',
          username: user.username,
          client_address: expect.stringMatching(LOOPBACK),
          details: { route: '/oauth2/token', session_id: res.body['session-state'] },
        }),
      ]);
      expect((await listKeys(res.body.access_token)).status).toBe(200);
    });

    it('when the refresh token is redeemed, then a new pair in the same session and the old refresh token is spent', async () => {
      const login = await tokenRequest(t, { grant_type: 'password', ...user });

      const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token }, { as });

      expectTokenResponse(res, WITH_REFRESH);
      expect(res.body['session-state']).toBe(login.body['session-state']);
      expect(res.body.refresh_token).not.toBe(login.body.refresh_token);
      expect(res.body.scope).toBe(login.body.scope);
      expect(await eventsOf(t, res)).toEqual([expect.objectContaining({ type: 'token.issued', details: expect.objectContaining({ route: '/oauth2/token' }) })]);
      expect((await listKeys(res.body.access_token)).status).toBe(200);
      const again = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token }, { as });
      expect(again.body.error).toBe('invalid_grant');
    });

    it('when an API key authenticates for client_credentials, then an access token and no refresh token, with the same effects as the API-key route', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const before = nowSeconds();

      const res = await tokenRequest(t, { grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey }, { as });

      expectTokenResponse(res, WITHOUT_REFRESH);
      await expectApiKeyLogin(res, key, before);
      expect(claimsOf(res.body.access_token)).toEqual(expect.objectContaining({ client_id: key.appname, principal_type: 'api_key' }));
      expect((await listKeys(res.body.access_token)).status).toBe(200);
    });

    it('when a request token is the jwt-bearer assertion, then a token pair with the same effects as the API-key route', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const before = nowSeconds();

      const res = await tokenRequest(t, { grant_type: JWT_BEARER, assertion: assertionOf(key) }, { as });

      expectTokenResponse(res, WITH_REFRESH);
      await expectApiKeyLogin(res, key, before);
      expect((await listKeys(res.body.access_token)).status).toBe(200);
    });
  });

  /** What the API-key route does on success: a session of the key, last_login and last_ip, and a token.issued event. */
  async function expectApiKeyLogin(res: Response, key: TestApiKey, before: number): Promise<void> {
    const sessionId = res.body['session-state'] as string;
    expect(await sessionOf(t, sessionId)).toEqual(expect.objectContaining({ api_key_id: expect.any(String), user_id: null, revoked_at: null }));
    const { last_login, last_ip } = await lastLoginOf(t, key.appname);
    expect(Number(last_login)).toBeGreaterThanOrEqual(before);
    expect(Number(last_login)).toBeLessThanOrEqual(nowSeconds());
    expect(last_ip).toMatch(LOOPBACK);
    expect(await eventsOf(t, res)).toEqual([
      {
        type: 'token.issued',
        actor: `api_key:${key.appname}`,
        appname: key.appname,
        username: null,
        client_address: expect.stringMatching(LOOPBACK),
        details: { route: '/oauth2/token', session_id: sessionId },
      },
    ]);
  }

  it('when a key shows its last login through the API after client_credentials, then last_login is in seconds and last_ip the client address', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const admin = await tokenRequest(t, { grant_type: 'password', ...(await createUser(t, { role: 'admin' })) });

    await tokenRequest(t, { grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey });
    const record = await t.http().get(`/api/v1/api-keys/${key.appname}`).set(bearer(admin.body.access_token));

    expect(record.status).toBe(200);
    expect(record.body.data).toEqual(expect.objectContaining({ last_login: expect.any(Number), last_ip: expect.stringMatching(LOOPBACK) }));
    expect(Math.abs(record.body.data.last_login - nowSeconds())).toBeLessThan(10);
  });

  it('when a jwt-bearer assertion lives 3600 s for the token endpoint URL, then it is accepted there, and the API-key route keeps its 300 s and its aud', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const iat = nowSeconds();
    const forEndpoint = (claims: Record<string, unknown>) => assertionOf(key, { iat, exp: iat + 3600, ...claims });

    const endpoint = await tokenRequest(t, { grant_type: JWT_BEARER, assertion: forEndpoint({ aud: 'http://issuer.test/oauth2/token' }) });
    const ownLong = await t.http().post('/api/v1/auth/token').send({ jwt: forEndpoint({ aud: undefined }) });
    const ownAud = await t.http().post('/api/v1/auth/token').send({ jwt: assertionOf(key, { aud: 'http://issuer.test/oauth2/token' }) });

    expectTokenResponse(endpoint, WITH_REFRESH);
    expect(ownLong.status).toBe(401);
    expect(ownAud.status).toBe(401);
  });

  it('when an assertion accepted at /oauth2/token is presented at the API-key route, then it is refused there as a replay', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const assertion = assertionOf(key);
    expect((await tokenRequest(t, { grant_type: JWT_BEARER, assertion })).status).toBe(200);

    const res = await t.http().post('/api/v1/auth/token').send({ jwt: assertion });

    expect(res.status).toBe(401);
  });

  it('when extra standard parameters (resource, audience) and unknown ones come along, then they are ignored', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const extra = { resource: 'https://api.example/', audience: 'https://api.example', nonce: 'n', state: 's' };

    const password = await tokenRequest(t, { grant_type: 'password', ...user, client_id: 'cli', ...extra });
    const client = await tokenRequest(t, { grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey, ...extra });
    const bearerGrant = await tokenRequest(t, { grant_type: JWT_BEARER, assertion: assertionOf(key), ...extra });

    expectTokenResponse(password, WITH_REFRESH);
    expectTokenResponse(client, WITHOUT_REFRESH);
    expectTokenResponse(bearerGrant, WITH_REFRESH);
    expect(claimsOf(password.body.access_token).aud).toBe(t.config.audience);
  });

  it('when a parameter is sent without a value, then it is as if it were not sent', async () => {
    const res = await tokenRequest(t, `grant_type=password&username=${user.username}&password=${user.password}&scope=&client_id=`);

    expectTokenResponse(res, WITH_REFRESH);
    expect(res.body.scope).toBe('openid api-keys:read api-keys:write');
    expect(claimsOf(res.body.access_token).client_id).toBe('public');
  });
});
