import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, tokenForRole, type TestUser } from '../../helpers/factories';
import { claimsOf, signedByForeignKey } from '../../helpers/tokens';
import { expectError } from '../../helpers/errors';
import { ISSUER, refreshWith, sleep } from '../auth/support';
import { introspect, OAUTH, revoke } from './support';
import { OAUTH2 } from '../oauth2/support';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';

/** The active answer for a token: its own claims plus who holds it, the current scope and its kind. */
function activeAnswer(token: string, holder: { username: string; client_id: string } | { client_id: string }, tokenType: string, scope: string) {
  const c = claimsOf(token);
  return {
    active: true,
    scope,
    ...holder,
    token_type: tokenType,
    exp: c.exp,
    iat: c.iat,
    sub: c.sub,
    aud: ISSUER,
    iss: ISSUER,
    jti: c.jti,
    sid: c.sid,
  };
}

describe('POST /api/auth/bearer/introspect (RFC 7662 token introspection)', () => {
  let t: TestApp;
  let caller: string;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'ops-cli' });
    caller = await tokenForRole(t, 'viewer');
    user = await createUser(t, { role: 'editor' });
  });
  afterAll(() => t.close());

  describe('live tokens', () => {
    it('when a user’s access token is introspected, then active with its claims, username, client (DEFAULT_CLIENT_ID), scope and token_type access_token, not cached', async () => {
      const login = await loginAs(t, user);

      const res = await introspect(t, caller, { token: login.access_token });

      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual(activeAnswer(login.access_token, { username: user.username, client_id: 'public' }, 'access_token', 'openid api-keys:read api-keys:write'));
    });

    it('when a user’s refresh token is introspected (JSON, with a hint), then active with token_type refresh_token and the refresh token’s jti', async () => {
      const login = await loginAs(t, user);

      const res = await t.http().post(OAUTH.introspect).set(bearer(caller)).send({ token: login.refresh_token, token_type_hint: 'refresh_token' });

      expect(res.status).toBe(200);
      expect(res.body).toEqual(activeAnswer(login.refresh_token, { username: user.username, client_id: 'public' }, 'refresh_token', 'openid api-keys:read api-keys:write'));
    });

    it('when an API key’s access and refresh tokens are introspected, then active with client_id = appname', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const login = await loginWithApiKey(t, key);

      const access = await introspect(t, caller, { token: login.access_token });
      const refresh = await introspect(t, caller, { token: login.refresh_token });

      expect(access.body).toEqual(activeAnswer(login.access_token, { client_id: key.appname }, 'access_token', 'openid api-keys:read'));
      expect(refresh.body).toEqual(activeAnswer(login.refresh_token, { client_id: key.appname }, 'refresh_token', 'openid api-keys:read'));
    });

    it('when a user signed in at the token endpoint for a named client, then both tokens name that client', async () => {
      const login = await t.http().post(OAUTH2.token).type('form').send({ grant_type: 'password', username: user.username, password: user.password, client_id: 'ops-cli' });
      expect(login.status).toBe(200);

      const access = await introspect(t, caller, { token: login.body.access_token });
      const refresh = await introspect(t, caller, { token: login.body.refresh_token });

      expect(access.body).toMatchObject({ active: true, username: user.username, client_id: 'ops-cli' });
      expect(refresh.body).toMatchObject({ active: true, username: user.username, client_id: 'ops-cli' });
    });

    it('when the hint names the wrong kind, then the token is still recognised', async () => {
      const login = await loginAs(t, user);

      const res = await introspect(t, caller, { token: login.access_token, token_type_hint: 'refresh_token' });

      expect(res.body).toMatchObject({ active: true, token_type: 'access_token' });
    });

    it('when the holder’s role changed since login, then the token is no longer active (set-role ends the user’s sessions)', async () => {
      const changing = await createUser(t, { role: 'admin' });
      const login = await loginAs(t, changing);
      await t.services.users.setRole(changing.username, null, CLI_CONTEXT);

      const res = await introspect(t, caller, { token: login.access_token });

      expect(res.body).toEqual({ active: false });
    });

    it('when introspection is called, then the presented token is not consumed: it still works afterwards', async () => {
      const login = await loginAs(t, user);

      await introspect(t, caller, { token: login.refresh_token });

      expect((await refreshWith(t, login.refresh_token)).status).toBe(200);
    });
  });

  describe('tokens that are not live: exactly {"active": false}', () => {
    const inactive = async (token: string) => {
      const res = await introspect(t, caller, { token });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toStrictEqual({ active: false });
    };

    it('when the session was revoked, then its access and refresh tokens are inactive', async () => {
      const login = await loginAs(t, user);
      await revoke(t, { token: login.refresh_token });

      await inactive(login.access_token);
      await inactive(login.refresh_token);
    });

    it('when a refresh token has already been used, then it is inactive while its successor is active', async () => {
      const login = await loginAs(t, user);
      const rotated = (await refreshWith(t, login.refresh_token)).body;

      await inactive(login.refresh_token);
      expect((await introspect(t, caller, { token: rotated.refresh_token })).body).toMatchObject({ active: true });
    });

    it('when the API key was regenerated, then tokens obtained through the old appkey are inactive', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const login = await loginWithApiKey(t, key);
      const admin = await tokenForRole(t, 'admin');
      const regen = await t.http().put(`/api/v1/api-keys/${key.appname}/regen`).set(bearer(admin)).send({ roles: ['viewer'] });
      expect(regen.status).toBe(200);

      await inactive(login.access_token);
      await inactive(login.refresh_token);
    });

    it('when the user was disabled, then their tokens are inactive', async () => {
      const doomed = await createUser(t, { role: 'viewer' });
      const login = await loginAs(t, doomed);
      await t.services.users.disable(doomed.username, CLI_CONTEXT);

      await inactive(login.access_token);
      await inactive(login.refresh_token);
    });

    it('when the token carries our claims and kid but a foreign signature, then inactive', async () => {
      const login = await loginAs(t, user);

      await inactive(signedByForeignKey(login.access_token));
      await inactive(signedByForeignKey(login.refresh_token));
    });

    it.each([['garbage'], ['aaa.bbb.ccc']])('when the token is %s, then inactive', async (token) => {
      await inactive(token);
    });

    it('when an ID token is presented, then inactive', async () => {
      await inactive((await loginAs(t, user)).id_token);
    });
  });

  // No bearer token, a refused one, and a caller with no role: test/integration/security/bearer-routes.test.ts.
  describe('the caller', () => {
    it('when a caller introspects its own token, then active', async () => {
      const res = await introspect(t, caller, { token: caller });

      expect(res.body).toMatchObject({ active: true, token_type: 'access_token' });
    });

    it('when no bearer token is sent and the body is malformed, then 401 comes first', async () => {
      const res = await t.http().post(OAUTH.introspect).set('Content-Type', 'application/json').send('{not json');

      expectError(res, 401, 'Unauthorized');
    });
  });

  describe('malformed requests', () => {
    it('when the token field is missing, then 400 naming it', async () => {
      const res = await introspect(t, caller, {});

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toContain('body.token');
    });

    it('when an unknown field is sent, then 400 naming it', async () => {
      const res = await introspect(t, caller, { token: 'x', client_secret: 'y' });

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toContain('"client_secret"');
    });

    it('when the content type is text/plain, then 415', async () => {
      const res = await t.http().post(OAUTH.introspect).set(bearer(caller)).set('Content-Type', 'text/plain').send('token=x');

      expectError(res, 415, 'UnsupportedMediaType');
    });

    it('when the route is called with GET, then 405 with Allow: POST', async () => {
      const res = await t.http().get(OAUTH.introspect).set(bearer(caller));

      expectError(res, 405, 'MethodNotAllowed');
      expect(res.headers.allow).toBe('POST');
    });
  });
});

describe('introspection of expired tokens', () => {
  let t: TestApp;
  // Long enough that the caller's own token, issued after the sleep, outlives both calls even on a
  // loaded machine: exp is stamped in whole seconds, so a token can expire up to 1 s early.
  const ACCESS_TOKEN_TTL = 3;

  beforeAll(async () => {
    t = await startTestApp({ ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL), REFRESH_TOKEN_TTL: '1' });
  });
  afterAll(() => t.close());

  it('when the access and refresh tokens have expired, then both are exactly {"active": false}', async () => {
    const login = await loginAs(t, await createUser(t, { role: 'viewer' }));
    await sleep(ACCESS_TOKEN_TTL * 1000 + 100);
    // Logged in after the sleep, so the caller's own token is fresh.
    const caller = await tokenForRole(t, 'viewer');

    const access = await introspect(t, caller, { token: login.access_token });
    const refresh = await introspect(t, caller, { token: login.refresh_token });

    expect(access.body).toStrictEqual({ active: false });
    expect(refresh.body).toStrictEqual({ active: false });
  });
});
