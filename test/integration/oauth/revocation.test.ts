import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, type TestUser } from '../../helpers/factories';
import { expectError, expectInvalidToken } from '../../helpers/errors';
import { signedByForeignKey } from '../../helpers/tokens';
import { callProtected, refreshWith, sleep } from '../auth/support';
import { OAUTH, revoke, sessionStates } from './support';

/** RFC 7009: 200, no body, never cached. */
function expectRevocationAnswer(res: { status: number; headers: Record<string, string>; text: string }): void {
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.text).toBe('');
  expect(res.headers['content-type']).toBeUndefined();
}

describe('POST /api/auth/bearer/revoke (RFC 7009 token revocation)', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  describe('revoking ends the whole session', () => {
    it('when a refresh token is revoked, then 200 with no body, and the refresh and access tokens of that session get 401', async () => {
      const login = await loginAs(t, user);
      expect((await callProtected(t, login.access_token)).status).toBe(200);

      const res = await revoke(t, { token: login.refresh_token, token_type_hint: 'refresh_token' });

      expectRevocationAnswer(res);
      expectInvalidToken(await callProtected(t, login.access_token));
      expectError(await refreshWith(t, login.refresh_token), 401, 'Unauthorized');
    });

    it('when an access token is revoked (JSON), then the refresh token and every access token of that session get 401', async () => {
      const login = await loginAs(t, user);
      const rotated = (await refreshWith(t, login.refresh_token)).body;

      const res = await t.http().post(OAUTH.revoke).send({ token: rotated.access_token });

      expectRevocationAnswer(res);
      expectInvalidToken(await callProtected(t, rotated.access_token));
      expectInvalidToken(await callProtected(t, login.access_token));
      expectError(await refreshWith(t, rotated.refresh_token), 401, 'Unauthorized');
    });

    it('when the hint names the other kind of token, then the token is still found and its session revoked', async () => {
      const login = await loginAs(t, user);

      const res = await revoke(t, { token: login.access_token, token_type_hint: 'refresh_token' });

      expectRevocationAnswer(res);
      expectError(await refreshWith(t, login.refresh_token), 401, 'Unauthorized');
    });

    it('when one session is revoked, then other sessions of the same user keep working', async () => {
      const revoked = await loginAs(t, user);
      const other = await loginAs(t, user);

      await revoke(t, { token: revoked.refresh_token });

      expect((await callProtected(t, other.access_token)).status).toBe(200);
      expect((await refreshWith(t, other.refresh_token)).status).toBe(200);
    });

    it('when an API key’s refresh token is revoked, then that session ends and a new exchange still works', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const login = await loginWithApiKey(t, key);

      const res = await revoke(t, { token: login.refresh_token });

      expectRevocationAnswer(res);
      expectInvalidToken(await callProtected(t, login.access_token));
      expect((await callProtected(t, (await loginWithApiKey(t, key)).access_token)).status).toBe(200);
    });

    it('when a token of an already revoked session is revoked again, then 200 once more', async () => {
      const login = await loginAs(t, user);
      await revoke(t, { token: login.refresh_token });

      const res = await revoke(t, { token: login.access_token });

      expectRevocationAnswer(res);
    });
  });

  describe('tokens that are not ours or not live: 200 and nothing changes', () => {
    it.each([
      ['garbage', () => 'garbage'],
      ['a JWT-shaped string', () => 'aaa.bbb.ccc'],
    ])('when the token is %s, then 200 and no session changes', async (_what, token) => {
      await loginAs(t, user);
      const before = await sessionStates(t);

      const res = await revoke(t, { token: token() });

      expectRevocationAnswer(res);
      expect(await sessionStates(t)).toEqual(before);
    });

    it('when the token carries our claims but a foreign signature, then 200 and its session stays live', async () => {
      const login = await loginAs(t, user);
      const before = await sessionStates(t);

      const res = await revoke(t, { token: signedByForeignKey(login.refresh_token) });

      expectRevocationAnswer(res);
      expect(await sessionStates(t)).toEqual(before);
      expect((await callProtected(t, login.access_token)).status).toBe(200);
    });

    it('when an ID token is presented, then 200 and its session stays live', async () => {
      const login = await loginAs(t, user);

      const res = await revoke(t, { token: login.id_token });

      expectRevocationAnswer(res);
      expect((await callProtected(t, login.access_token)).status).toBe(200);
    });
  });

  describe('malformed requests', () => {
    it('when the token field is missing, then 400 naming it', async () => {
      const res = await revoke(t, {});

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toContain('body.token');
    });

    it('when an unknown field is sent, then 400 naming it', async () => {
      const res = await revoke(t, { token: 'x', client_id: 'someone' });

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toContain('"client_id"');
    });

    it('when token_type_hint is not access_token or refresh_token, then 400 naming it', async () => {
      const res = await revoke(t, { token: 'x', token_type_hint: 'id_token' });

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toContain('body.token_type_hint');
    });

    it('when the content type is text/plain, then 415', async () => {
      const login = await loginAs(t, user);

      const res = await t.http().post(OAUTH.revoke).set('Content-Type', 'text/plain').send(login.refresh_token);

      expectError(res, 415, 'UnsupportedMediaType');
      expect((await callProtected(t, login.access_token)).status).toBe(200);
    });

    it('when the route is called with GET, then 405 with Allow: POST', async () => {
      const res = await t.http().get(OAUTH.revoke);

      expectError(res, 405, 'MethodNotAllowed');
      expect(res.headers.allow).toBe('POST');
    });

    it('when a bearer header is sent along, then it is ignored: the token in the body decides', async () => {
      const login = await loginAs(t, user);

      const res = await t.http().post(OAUTH.revoke).set(bearer('garbage')).type('form').send({ token: login.refresh_token });

      expectRevocationAnswer(res);
      expectInvalidToken(await callProtected(t, login.access_token));
    });
  });
});

describe('revocation with expired tokens', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ ACCESS_TOKEN_TTL: '1' });
  });
  afterAll(() => t.close());

  it('when an expired access token is revoked, then 200 and its session is unaffected', async () => {
    const login = await loginAs(t, await createUser(t, { role: 'viewer' }));
    await sleep(2100);
    const before = await sessionStates(t);

    const res = await revoke(t, { token: login.access_token });

    expectRevocationAnswer(res);
    expect(await sessionStates(t)).toEqual(before);
    expect((await refreshWith(t, login.refresh_token)).status).toBe(200);
  });
});

describe('revocation rate limit (per client address, shared with the token routes)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_TOKEN_REQUESTS: '2', RATE_LIMIT_TOKEN_WINDOW: '60' });
  });
  afterAll(() => t.close());

  it('when the token-route budget is spent, then revocation answers 429 with Retry-After', async () => {
    await revoke(t, { token: 'garbage' });
    await refreshWith(t, 'garbage');

    const res = await revoke(t, { token: 'garbage' });

    expectError(res, 429, 'TooManyRequests');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.headers['ratelimit']).toMatch(/^"token-routes"; r=0;/);
  });
});
