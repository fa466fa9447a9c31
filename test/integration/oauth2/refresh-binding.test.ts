import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, type TestApiKey, type TestUser } from '../../helpers/factories';
import { expectError, expectOAuthError } from '../../helpers/errors';
import { assertionOf, basic, eventsOf, JWT_BEARER, sessionOf, stateOf, tokenRequest } from './support';

describe('refresh tokens are bound to their client; one family across both refresh routes', () => {
  let t: TestApp;
  let user: TestUser;
  let key: TestApiKey;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'cli,other,someone' });
    user = await createUser(t, { role: 'viewer' });
    key = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const loginFor = (clientId?: string) => tokenRequest(t, { grant_type: 'password', ...user, ...(clientId !== undefined && { client_id: clientId }) });
  const refreshAt = (refreshToken: string, clientId?: string) =>
    tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, ...(clientId !== undefined && { client_id: clientId }) });
  const ownRefresh = (refreshToken: string) => t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: refreshToken });
  const listKeys = (accessToken: string) => t.http().get('/api/v1/api-keys').set(bearer(accessToken));

  describe('the binding at /oauth2/token', () => {
    it('when a refresh names another client_id, then 400 invalid_grant, nothing changes, and the token still works for its own client', async () => {
      const login = await loginFor('cli');
      const before = await stateOf(t);

      const res = await refreshAt(login.body.refresh_token, 'other');

      expectOAuthError(res, 400, 'invalid_grant');
      expect(await stateOf(t)).toEqual(before);
      expect(await eventsOf(t, res)).toEqual([]);
      expect((await listKeys(login.body.access_token)).status).toBe(200);
      expect((await refreshAt(login.body.refresh_token, 'cli')).status).toBe(200);
    });

    it('when a refresh names no client_id, then it is never refused for the binding', async () => {
      const login = await loginFor('cli');

      const res = await refreshAt(login.body.refresh_token);

      expect(res.status).toBe(200);
      expect((await sessionOf(t, res.body['session-state']))?.client_id).toBe('cli');
    });

    it('when a token was issued without a client_id, then it is bound to DEFAULT_CLIENT_ID (public), at either login route', async () => {
      const endpointLogin = await loginFor();
      const ownLogin = await loginAs(t, user);

      const named = await refreshAt(endpointLogin.body.refresh_token, 'public');
      const other = await refreshAt(ownLogin.refresh_token, 'cli');
      const ownNamed = await refreshAt(ownLogin.refresh_token, 'public');

      expect(named.status).toBe(200);
      expectOAuthError(other, 400, 'invalid_grant');
      expect(ownNamed.status).toBe(200);
    });

    it('when an API key’s session is refreshed, then its client is the appname, named with its secret (Hardening, round two: client_id is checked)', async () => {
      const login = await tokenRequest(t, { grant_type: JWT_BEARER, assertion: assertionOf(key) });

      const other = await refreshAt(login.body.refresh_token, 'public');
      const unauthenticated = await refreshAt(login.body.refresh_token, key.appname);
      const own = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token, client_id: key.appname, client_secret: key.appkey });

      expectOAuthError(other, 400, 'invalid_grant');
      expectOAuthError(unauthenticated, 401, 'invalid_client');
      expect(own.status).toBe(200);
    });

    it('when a refresh authenticates as an API key client, then it must be the client the session was opened for', async () => {
      const forCli = await loginFor('cli');
      const forKey = await tokenRequest(t, { grant_type: 'password', ...user }, { authorization: basic(key.appname, key.appkey) });

      const mismatch = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: forCli.body.refresh_token }, { authorization: basic(key.appname, key.appkey) });
      const match = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: forKey.body.refresh_token }, { authorization: basic(key.appname, key.appkey) });

      expectOAuthError(mismatch, 400, 'invalid_grant');
      expect(match.status).toBe(200);
    });

    it('when a refresh sends a wrong client secret, then 401 invalid_client with a Basic challenge and nothing changes', async () => {
      const forKey = await tokenRequest(t, { grant_type: 'password', ...user }, { authorization: basic(key.appname, key.appkey) });
      const before = await stateOf(t);

      const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: forKey.body.refresh_token }, { authorization: basic(key.appname, `${key.appkey}x`) });

      expectOAuthError(res, 401, 'invalid_client', { basicChallenge: true });
      expect(await stateOf(t)).toEqual(before);
      expect((await refreshAt(forKey.body.refresh_token)).status).toBe(200);
    });

    it('when a spent refresh token comes with another client_id, then invalid_grant for the binding, not the reuse signal: the session lives on', async () => {
      const login = await loginFor('cli');
      const rotated = await refreshAt(login.body.refresh_token, 'cli');

      const res = await refreshAt(login.body.refresh_token, 'other');

      expectOAuthError(res, 400, 'invalid_grant');
      expect((await sessionOf(t, login.body['session-state']))?.revoked_at).toBeNull();
      expect((await refreshAt(rotated.body.refresh_token, 'cli')).status).toBe(200);
    });
  });

  describe('the own refresh route', () => {
    it('when a token bound to a client is refreshed at /api/auth/bearer/refresh, then the binding is ignored there, and kept for the token endpoint', async () => {
      const login = await loginFor('cli');

      const own = await ownRefresh(login.body.refresh_token);
      const other = await refreshAt(own.body.refresh_token, 'other');
      const bound = await refreshAt(own.body.refresh_token, 'cli');

      expect(own.status).toBe(200);
      expectOAuthError(other, 400, 'invalid_grant');
      expect(bound.status).toBe(200);
    });

    it('when a token redeemed at the own route is presented again at /oauth2/token, then invalid_grant and the session is revoked', async () => {
      const login = await loginFor('cli');
      const own = await ownRefresh(login.body.refresh_token);

      const reused = await refreshAt(login.body.refresh_token, 'cli');

      expectOAuthError(reused, 400, 'invalid_grant');
      expect((await listKeys(own.body.access_token)).status).toBe(401);
      expectError(await ownRefresh(own.body.refresh_token), 401, 'Unauthorized');
    });

    it('when a token redeemed at /oauth2/token is presented again at the own route, then 401 and the session is revoked', async () => {
      const login = await loginFor();
      const endpoint = await refreshAt(login.body.refresh_token);

      const reused = await ownRefresh(login.body.refresh_token);

      expectError(reused, 401, 'Unauthorized');
      expect((await listKeys(endpoint.body.access_token)).status).toBe(401);
      expectOAuthError(await refreshAt(endpoint.body.refresh_token), 400, 'invalid_grant');
    });
  });
});

describe('refresh binding with DEFAULT_CLIENT_ID set', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ DEFAULT_CLIENT_ID: 'console', PUBLIC_CLIENT_IDS: 'public' });
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it('when a token issued without a client_id is refreshed naming DEFAULT_CLIENT_ID, then it is accepted; naming public, refused', async () => {
    const login = await tokenRequest(t, { grant_type: 'password', ...user });

    const other = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token, client_id: 'public' });
    const bound = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token, client_id: 'console' });

    expectOAuthError(other, 400, 'invalid_grant');
    expect(bound.status).toBe(200);
  });
});
