import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, type TestApiKey, type TestUser } from '../../helpers/factories';
import { expectError, expectMissingToken, expectOAuthError } from '../../helpers/errors';
import { basic, eventsOf, OAUTH2, post, stateOf, tokenRequest, type Encoding } from './support';

describe('POST /oauth2/revoke and /oauth2/introspect (RFC 7009, RFC 7662) with client authentication', () => {
  let t: TestApp;
  let user: TestUser;
  let viewerKey: TestApiKey;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'cli,another-client' });
    user = await createUser(t, { role: 'viewer' });
    viewerKey = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const login = (extra: Record<string, string> = {}) => tokenRequest(t, { grant_type: 'password', ...user, ...extra });
  const listKeys = (accessToken: string) => t.http().get('/api/v1/api-keys').set(bearer(accessToken));
  const refresh = (refreshToken: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken });

  describe('revocation', () => {
    it.each<Encoding>(['form', 'json'])('when a refresh token is revoked by possession alone (%s), then 200 without a body and its whole session ends', async (as) => {
      const tokens = await login({ client_id: 'cli' });

      const res = await post(t, OAUTH2.revoke, { token: tokens.body.refresh_token, token_type_hint: 'refresh_token' }, { as });

      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(res.headers['cache-control']).toBe('no-store');
      expect((await listKeys(tokens.body.access_token)).status).toBe(401);
      expectOAuthError(await refresh(tokens.body.refresh_token), 400, 'invalid_grant');
    });

    it('when an access token is revoked, then its session ends too', async () => {
      const tokens = await login();

      const res = await post(t, OAUTH2.revoke, { token: tokens.body.access_token });

      expect(res.status).toBe(200);
      expect((await listKeys(tokens.body.access_token)).status).toBe(401);
    });

    it.each([
      ['Basic', () => ({ authorization: basic(viewerKey.appname, viewerKey.appkey) }), () => ({})],
      ['the body', () => ({}), () => ({ client_id: viewerKey.appname, client_secret: viewerKey.appkey })],
    ])('when right client credentials come in %s, then the token is revoked, whoever it was issued to', async (_, options, extra) => {
      const tokens = await login({ client_id: 'another-client' });

      const res = await post(t, OAUTH2.revoke, { token: tokens.body.refresh_token, ...extra() }, options());

      expect(res.status).toBe(200);
      expect((await listKeys(tokens.body.access_token)).status).toBe(401);
    });

    it('when the Basic credentials are wrong or unknown, then the same 401 invalid_client with a Basic challenge, nothing revoked, login.failed', async () => {
      const tokens = await login();
      const before = await stateOf(t);

      const wrong = await post(t, OAUTH2.revoke, { token: tokens.body.refresh_token }, { authorization: basic(viewerKey.appname, `${viewerKey.appkey}x`) });
      const unknown = await post(t, OAUTH2.revoke, { token: tokens.body.refresh_token }, { authorization: basic('no-such-app', viewerKey.appkey) });

      expectOAuthError(wrong, 401, 'invalid_client', { basicChallenge: true });
      expect(unknown.body).toEqual(wrong.body);
      expect(await stateOf(t)).toEqual(before);
      expect((await listKeys(tokens.body.access_token)).status).toBe(200);
      expect(await eventsOf(t, wrong)).toEqual([expect.objectContaining({ type: 'login.failed', appname: viewerKey.appname })]);
    });

    it('when the client secret in the body is wrong, then 401 invalid_client without a challenge, and nothing revoked', async () => {
      const tokens = await login();
      const before = await stateOf(t);

      const res = await post(t, OAUTH2.revoke, { token: tokens.body.refresh_token, client_id: viewerKey.appname, client_secret: 'ak_wrong' });

      expectOAuthError(res, 401, 'invalid_client');
      expect(await stateOf(t)).toEqual(before);
    });

    it('when a wrong client secret comes in the body beside Basic credentials with an empty password, then 401 invalid_client and nothing revoked', async () => {
      const tokens = await login();
      const before = await stateOf(t);

      const res = await post(t, OAUTH2.revoke, { token: tokens.body.refresh_token, client_secret: 'ak_wrong' }, { authorization: basic(viewerKey.appname, '') });

      expectOAuthError(res, 401, 'invalid_client');
      expect(await stateOf(t)).toEqual(before);
    });

    it('when the token is not one of ours, then 200 all the same; when it is missing or the body malformed, then 400 invalid_request', async () => {
      const garbage = await post(t, OAUTH2.revoke, { token: 'not-a-token' });
      const missing = await post(t, OAUTH2.revoke, { token_type_hint: 'access_token' });
      const malformed = await t.http().post(OAUTH2.revoke).set('Content-Type', 'application/json').send('{"token":');

      expect(garbage.status).toBe(200);
      expectOAuthError(missing, 400, 'invalid_request');
      expectOAuthError(malformed, 400, 'invalid_request');
    });
  });

  describe('introspection', () => {
    it('when a bearer token with api-keys:read asks, then the answer describes the token', async () => {
      const caller = await login();
      const tokens = await login({ client_id: 'cli' });

      const res = await post(t, OAUTH2.introspect, { token: tokens.body.access_token }, { authorization: `Bearer ${caller.body.access_token}` });

      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual(expect.objectContaining({ active: true, username: user.username, token_type: 'access_token', sid: tokens.body['session-state'] }));
    });

    it.each([
      ['Basic', () => ({ authorization: basic(viewerKey.appname, viewerKey.appkey) }), () => ({})],
      ['the body', () => ({}), () => ({ client_id: viewerKey.appname, client_secret: viewerKey.appkey })],
    ])('when an API key whose role grants api-keys:read authenticates by %s, then 200 with the token’s description', async (_, options, extra) => {
      const tokens = await login();

      const res = await post(t, OAUTH2.introspect, { token: tokens.body.refresh_token, ...extra() }, options());

      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ active: true, token_type: 'refresh_token', username: user.username }));
    });

    it('when the session was revoked, then the answer is exactly {active: false}', async () => {
      const tokens = await login();
      await post(t, OAUTH2.revoke, { token: tokens.body.access_token });

      const res = await post(t, OAUTH2.introspect, { token: tokens.body.access_token }, { authorization: basic(viewerKey.appname, viewerKey.appkey) });

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ active: false });
    });

    it('when an API key without a role authenticates, then 403', async () => {
      const roleless = await createApiKey(t, { role: null });
      const tokens = await login();

      const res = await post(t, OAUTH2.introspect, { token: tokens.body.access_token }, { authorization: basic(roleless.appname, roleless.appkey) });

      expectError(res, 403, 'Forbidden');
    });

    it('when the bearer token’s scope lacks api-keys:read, then 403', async () => {
      const caller = await login({ scope: 'openid' });
      const tokens = await login();

      const res = await post(t, OAUTH2.introspect, { token: tokens.body.access_token }, { authorization: `Bearer ${caller.body.access_token}` });

      expectError(res, 403, 'Forbidden');
    });

    it('when no credentials come, then 401 with a Bearer challenge, possession of the token being not enough', async () => {
      const tokens = await login();

      const res = await post(t, OAUTH2.introspect, { token: tokens.body.access_token });

      expectMissingToken(res);
    });

    it('when the client credentials are wrong, then 401 invalid_client (with a Basic challenge for Basic)', async () => {
      const tokens = await login();

      const viaBasic = await post(t, OAUTH2.introspect, { token: tokens.body.access_token }, { authorization: basic(viewerKey.appname, 'ak_wrong') });
      const viaBody = await post(t, OAUTH2.introspect, { token: tokens.body.access_token, client_id: 'no-such-app', client_secret: viewerKey.appkey });

      expectOAuthError(viaBasic, 401, 'invalid_client', { basicChallenge: true });
      expectOAuthError(viaBody, 401, 'invalid_client');
    });
  });
});
