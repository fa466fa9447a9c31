import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, type TestApiKey, type TestUser } from '../../helpers/factories';
import { expectOAuthError } from '../../helpers/errors';
import { signRequestToken } from '../../helpers/tokens';
import { assertionOf, basic, eventsOf, JWT_BEARER, nowSeconds, stateOf, tokenRequest } from './support';

/** The answer without what differs per request, to compare two refusals. */
const answerOf = (res: Response) => ({ status: res.status, body: res.body, challenge: res.headers['www-authenticate'] });

describe('POST /oauth2/token: refused credentials change nothing, read alike, and are recorded', () => {
  let t: TestApp;
  let user: TestUser;
  let key: TestApiKey;

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t, { role: 'editor' });
    key = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  /** The request, with the state around it: what a refusal must leave as it was. */
  async function refused(request: () => Promise<Response>): Promise<{ res: Response; before: unknown; after: unknown }> {
    const before = await stateOf(t);
    const res = await request();
    return { res, before, after: await stateOf(t) };
  }

  describe('the password grant', () => {
    it('when the password is wrong or the user unknown, then the same 400 invalid_grant, no session, and login.failed with the reason', async () => {
      const wrong = await refused(() => tokenRequest(t, { grant_type: 'password', username: user.username, password: 'wrong-password-1' }));
      const unknown = await refused(() => tokenRequest(t, { grant_type: 'password', username: 'nobody-here', password: 'wrong-password-1' }));

      expectOAuthError(wrong.res, 400, 'invalid_grant');
      expect(answerOf(unknown.res)).toEqual(answerOf(wrong.res));
      expect(wrong.after).toEqual(wrong.before);
      expect(unknown.after).toEqual(unknown.before);
      expect(await eventsOf(t, wrong.res)).toEqual([
        expect.objectContaining({ type: 'login.failed', username: user.username, details: { route: '/oauth2/token', reason: 'wrong_password' } }),
      ]);
      expect(await eventsOf(t, unknown.res)).toEqual([expect.objectContaining({ type: 'login.failed', username: 'nobody-here', details: expect.objectContaining({ reason: 'unknown_user' }) })]);
    });

    it('when the user is disabled, then the same 400 invalid_grant as a wrong password', async () => {
      const disabled = await createUser(t, { role: 'viewer', disabled: true });
      const wrong = await tokenRequest(t, { grant_type: 'password', username: user.username, password: 'wrong-password-1' });

      const res = await refused(() => tokenRequest(t, { grant_type: 'password', ...disabled }));

      expect(answerOf(res.res)).toEqual(answerOf(wrong));
      expect(res.after).toEqual(res.before);
    });

    it('when the password is right but the client secret is wrong, then 401 invalid_client with a Basic challenge, and no session', async () => {
      const res = await refused(() => tokenRequest(t, { grant_type: 'password', ...user }, { authorization: basic(key.appname, `${key.appkey}x`) }));

      expectOAuthError(res.res, 401, 'invalid_client', { basicChallenge: true });
      expect(res.after).toEqual(res.before);
      expect(await eventsOf(t, res.res)).toEqual([expect.objectContaining({ type: 'login.failed', appname: key.appname })]);
    });
  });

  describe('client_credentials', () => {
    it('when the appkey is wrong or the appname unknown by Basic, then the same 401 invalid_client with a Basic challenge, nothing changed, login.failed', async () => {
      const wrong = await refused(() => tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(key.appname, `${key.appkey}x`) }));
      const unknown = await refused(() => tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic('no-such-app', key.appkey) }));

      expectOAuthError(wrong.res, 401, 'invalid_client', { basicChallenge: true });
      expect(answerOf(unknown.res)).toEqual(answerOf(wrong.res));
      expect(wrong.after).toEqual(wrong.before);
      expect(unknown.after).toEqual(unknown.before);
      expect(await eventsOf(t, wrong.res)).toEqual([
        expect.objectContaining({ type: 'login.failed', appname: key.appname, details: { route: '/oauth2/token', reason: 'invalid_client_secret' } }),
      ]);
      expect(await eventsOf(t, unknown.res)).toEqual([expect.objectContaining({ type: 'login.failed', appname: 'no-such-app' })]);
    });

    it('when they come in the body (client_secret_post), then the same 401 invalid_client without a challenge', async () => {
      const wrong = await refused(() => tokenRequest(t, { grant_type: 'client_credentials', client_id: key.appname, client_secret: `${key.appkey}x` }));
      const unknown = await refused(() => tokenRequest(t, { grant_type: 'client_credentials', client_id: 'no-such-app', client_secret: key.appkey }));

      expectOAuthError(wrong.res, 401, 'invalid_client');
      expect(answerOf(unknown.res)).toEqual(answerOf(wrong.res));
      expect(wrong.after).toEqual(wrong.before);
      expect(unknown.after).toEqual(unknown.before);
      expect(await eventsOf(t, unknown.res)).toEqual([expect.objectContaining({ type: 'login.failed', appname: 'no-such-app' })]);
    });

    it('when the key was regenerated, then its old appkey is refused as a client secret', async () => {
      const regenerated = await createApiKey(t, { role: 'viewer' });
      const admin = await tokenRequest(t, { grant_type: 'password', ...(await createUser(t, { role: 'admin' })) });
      const regen = await t.http().put(`/api/v1/api-keys/${regenerated.appname}/regen`).set(bearer(admin.body.access_token)).send({ roles: ['viewer'] });
      expect(regen.status).toBe(200);

      const res = await refused(() => tokenRequest(t, { grant_type: 'client_credentials', client_id: regenerated.appname, client_secret: regenerated.appkey }));

      expectOAuthError(res.res, 401, 'invalid_client');
      expect(res.after).toEqual(res.before);
    });
  });

  describe('the jwt-bearer grant', () => {
    it('when the assertion is signed with a wrong appkey or names an unknown appname, then the same 400 invalid_grant, nothing changed, login.failed', async () => {
      const wrong = await refused(() => tokenRequest(t, { grant_type: JWT_BEARER, assertion: signRequestToken(key.appname, `${key.appkey}x`) }));
      const unknown = await refused(() => tokenRequest(t, { grant_type: JWT_BEARER, assertion: signRequestToken('no-such-app', key.appkey) }));

      expectOAuthError(wrong.res, 400, 'invalid_grant');
      expect(answerOf(unknown.res)).toEqual(answerOf(wrong.res));
      expect(wrong.after).toEqual(wrong.before);
      expect(unknown.after).toEqual(unknown.before);
      expect(await eventsOf(t, wrong.res)).toEqual([expect.objectContaining({ type: 'login.failed', appname: key.appname })]);
      expect(await eventsOf(t, unknown.res)).toEqual([expect.objectContaining({ type: 'login.failed', appname: 'no-such-app' })]);
    });

    it.each([
      ['lives 3601 s', () => ({ iat: nowSeconds(), exp: nowSeconds() + 3601 })],
      ['has no jti', () => ({ jti: undefined })],
      ['has another aud', () => ({ aud: 'https://elsewhere.example' })],
      ['is not a JWT', () => undefined],
    ])('when the assertion %s, then 400 invalid_grant and nothing changes', async (_, claims) => {
      const given = claims();
      const assertion = given ? assertionOf(key, given) : 'not-a-jwt';

      const res = await refused(() => tokenRequest(t, { grant_type: JWT_BEARER, assertion }));

      expectOAuthError(res.res, 400, 'invalid_grant');
      expect(res.after).toEqual(res.before);
      expect(await eventsOf(t, res.res)).toEqual([expect.objectContaining({ type: 'login.failed' })]);
    });

    it('when an accepted assertion is replayed, then 400 invalid_grant, no second session, and login.failed', async () => {
      const assertion = assertionOf(key, { exp: nowSeconds() + 3600, aud: 'http://issuer.test/oauth2/token' });
      expect((await tokenRequest(t, { grant_type: JWT_BEARER, assertion })).status).toBe(200);

      const res = await refused(() => tokenRequest(t, { grant_type: JWT_BEARER, assertion }));

      expectOAuthError(res.res, 400, 'invalid_grant');
      expect(res.after).toEqual(res.before);
      expect(await eventsOf(t, res.res)).toEqual([expect.objectContaining({ type: 'login.failed', details: expect.objectContaining({ reason: 'replayed_request_token' }) })]);
    });
  });

  describe('the refresh_token grant', () => {
    it('when a used refresh token comes again, then 400 invalid_grant and its session is revoked, as on the service’s own route', async () => {
      const login = await tokenRequest(t, { grant_type: 'password', ...user });
      const rotated = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token });

      const reused = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token });

      expectOAuthError(reused, 400, 'invalid_grant');
      expect((await t.http().get('/api/v1/api-keys').set(bearer(rotated.body.access_token))).status).toBe(401);
      expectOAuthError(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token }), 400, 'invalid_grant');
      expect(await eventsOf(t, reused)).toEqual([expect.objectContaining({ type: 'refresh_token.reused', details: expect.objectContaining({ route: '/oauth2/token' }) })]);
    });

    it.each([
      ['is not a token', () => 'not-a-token'],
      ['is an access token', async () => (await tokenRequest(t, { grant_type: 'password', ...user })).body.access_token as string],
    ])('when the refresh token %s, then 400 invalid_grant and nothing changes', async (_, tokenOf) => {
      const refreshToken = await tokenOf();

      const res = await refused(() => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken }));

      expectOAuthError(res.res, 400, 'invalid_grant');
      expect(res.after).toEqual(res.before);
    });
  });
});
