import type { Role } from '../../../src/shared/principals';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, createUser, loginAs, loginWithApiKey } from '../../helpers/factories';
import { claimsOf, signRequestToken } from '../../helpers/tokens';
import { expectTokenResponse, fetchJwks, headerOf, ISSUER, PATHS, refreshWith, sleep, sleepUntilBeforeNextSecond } from './support';

const ACCESS_TOKEN_TTL = 120;
const REFRESH_TOKEN_TTL = 600;

describe('token responses and access-token claims', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL), REFRESH_TOKEN_TTL: String(REFRESH_TOKEN_TTL) });
  });
  afterAll(() => t.close());

  describe('the token response object', () => {
    it('when a user logs in, then the response has exactly the nine fields, bearer, not-before-policy 0, no-store and expires_in = ACCESS_TOKEN_TTL', async () => {
      const user = await createUser(t, { role: 'viewer' });

      const res = await t.http().post(PATHS.passwordToken).type('form').send(user);

      expectTokenResponse(res, { accessTtl: ACCESS_TOKEN_TTL });
    });

    it('when an API key logs in, then the response has exactly the nine fields with the same fixed values', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await t.http().post(PATHS.apiKeyToken).send({ jwt: signRequestToken(key.appname, key.appkey) });

      expectTokenResponse(res, { accessTtl: ACCESS_TOKEN_TTL });
    });

    it('when a refresh token is exchanged, then the response has exactly the nine fields with the same fixed values', async () => {
      const login = await loginAs(t, await createUser(t, { role: 'viewer' }));

      const res = await refreshWith(t, login.refresh_token);

      expectTokenResponse(res, { accessTtl: ACCESS_TOKEN_TTL });
    });

    it('when tokens are issued, then session-state is the session id carried as sid by the access, ID and refresh tokens', async () => {
      const login = await loginAs(t, await createUser(t, { role: 'viewer' }));

      expect(login['session-state']).toMatch(/\S/);
      expect(claimsOf(login.access_token).sid).toBe(login['session-state']);
      expect(claimsOf(login.id_token).sid).toBe(login['session-state']);
      expect(claimsOf(login.refresh_token).sid).toBe(login['session-state']);
    });

    it('when logins and refreshes happen at any point within a second, then refresh_expires_in is REFRESH_TOKEN_TTL every time', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const seen: string[] = [];
      const staggered = <T>(count: number, call: (i: number) => Promise<T>) =>
        Promise.all(Array.from({ length: count }, (_, i) => sleep(i * 4).then(() => call(i))));

      // Land calls in the last ~40 ms before a second boundary, where two clocks disagreeing on the second would show.
      for (let round = 0; round < 3; round += 1) {
        await sleepUntilBeforeNextSecond(40);
        const logins = await staggered(10, () => loginAs(t, user));
        await sleepUntilBeforeNextSecond(40);
        const refreshed = await staggered(10, (i) => refreshWith(t, logins[i]!.refresh_token));
        seen.push(...logins.map((l) => `login ${l.refresh_expires_in}`), ...refreshed.map((r) => `refresh ${r.body.refresh_expires_in}`));
      }

      expect(seen.filter((entry) => !entry.endsWith(` ${REFRESH_TOKEN_TTL}`))).toEqual([]);
    });
  });

  describe('access-token claims', () => {
    it('when a user logs in, then the access token carries iss, sub, aud, iat, exp, jti, sid, typ, scope, roles, preferred_username, principal_type', async () => {
      const user = await createUser(t, { role: 'editor' });

      const login = await loginAs(t, user);
      const claims = claimsOf(login.access_token);

      expect(claims).toEqual(
        expect.objectContaining({
          iss: ISSUER,
          sub: expect.stringMatching(/\S/),
          aud: ISSUER,
          iat: expect.any(Number),
          exp: (claims.iat as number) + ACCESS_TOKEN_TTL,
          jti: expect.stringMatching(/\S/),
          sid: login['session-state'],
          typ: 'Bearer',
          scope: 'openid api-keys:read api-keys:write',
          roles: ['editor'],
          preferred_username: user.username,
          principal_type: 'user',
        }),
      );
    });

    it('when an API key logs in, then preferred_username is the appname and principal_type api_key', async () => {
      const key = await createApiKey(t, { role: 'admin' });

      const login = await loginWithApiKey(t, key);

      expect(claimsOf(login.access_token)).toEqual(
        expect.objectContaining({
          iss: ISSUER,
          aud: ISSUER,
          sub: expect.stringMatching(/\S/),
          sid: login['session-state'],
          typ: 'Bearer',
          scope: 'openid api-keys:read api-keys:write api-keys:admin',
          roles: ['admin'],
          preferred_username: key.appname,
          principal_type: 'api_key',
        }),
      );
    });

    it('when the same user logs in twice, then sub is the same principal id and jti differs; another user has another sub', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const other = await createUser(t, { role: 'viewer' });

      const a = claimsOf((await loginAs(t, user)).access_token);
      const b = claimsOf((await loginAs(t, user)).access_token);
      const c = claimsOf((await loginAs(t, other)).access_token);

      expect(a.sub).toBe(b.sub);
      expect(a.jti).not.toBe(b.jti);
      expect(c.sub).not.toBe(a.sub);
    });

    it('when a token is issued, then its header is ES256 with a kid that the JWK Set publishes', async () => {
      const login = await loginAs(t, await createUser(t, { role: 'viewer' }));

      const header = headerOf(login.access_token);
      const jwks = await fetchJwks(t);

      expect(header.alg).toBe('ES256');
      expect(header.kid).toEqual(expect.stringMatching(/\S/));
      expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
      expect(headerOf(login.id_token)).toMatchObject({ alg: 'ES256', kid: header.kid });
    });
  });

  describe('scope by role', () => {
    it.each<[Role | null, string]>([
      ['viewer', 'openid api-keys:read'],
      ['editor', 'openid api-keys:read api-keys:write'],
      ['admin', 'openid api-keys:read api-keys:write api-keys:admin'],
      [null, 'openid'],
    ])('when a user with role %s logs in, then scope is "%s" in the response and the token', async (role, scope) => {
      const login = await loginAs(t, await createUser(t, { role }));

      expect(login.scope).toBe(scope);
      expect(claimsOf(login.access_token)).toMatchObject({ scope, roles: role ? [role] : [] });
    });

    it.each<[Role | null, string]>([
      ['viewer', 'openid api-keys:read'],
      [null, 'openid'],
    ])('when an API key with role %s logs in, then scope is "%s"', async (role, scope) => {
      const login = await loginWithApiKey(t, await createApiKey(t, { role }));

      expect(login.scope).toBe(scope);
      expect(claimsOf(login.access_token)).toMatchObject({ scope, roles: role ? [role] : [] });
    });
  });
});

describe('refresh_expires_in capped by SESSION_MAX_TTL', () => {
  let t: TestApp;
  const SESSION_MAX_TTL = 5;

  beforeAll(async () => {
    t = await startTestApp({ REFRESH_TOKEN_TTL: '1800', SESSION_MAX_TTL: String(SESSION_MAX_TTL) });
  });
  afterAll(() => t.close());

  it('when REFRESH_TOKEN_TTL exceeds SESSION_MAX_TTL, then refresh_expires_in never goes past the session end', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const seen: number[] = [];

    for (let i = 0; i < 8; i += 1) {
      seen.push((await loginAs(t, user)).refresh_expires_in);
      await sleep(110);
    }

    for (const value of seen) {
      expect(value).toBeGreaterThanOrEqual(SESSION_MAX_TTL - 1);
      expect(value).toBeLessThanOrEqual(SESSION_MAX_TTL);
    }
  });
});
