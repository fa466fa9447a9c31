import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import { signRequestToken } from '../../helpers/tokens';
import { expectError, expectInvalidToken } from '../../helpers/errors';
import { keyPath, nowSeconds } from './support';

describe('GET /api/v1/api-keys/{appname} (get)', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  const get = (appname: string) => t.http().get(keyPath(appname)).set(bearer(admin));

  describe('happy path', () => {
    it('when a key has never logged in, then 200 with the record, null login fields and no appkey', async () => {
      const key = await createApiKey(t, { role: 'editor', description: 'reporting' });

      const res = await get(key.appname);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        meta: { code: 200, count: 1 },
        data: { appname: key.appname, description: 'reporting', roles: ['editor'], last_login: null, last_ip: null },
      });
    });

    it('when the key has exchanged a request token, then last_login is that moment in whole seconds and last_ip the client address', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const before = nowSeconds();
      await loginWithApiKey(t, key);
      const after = nowSeconds();

      const res = await get(key.appname);

      expect(res.status).toBe(200);
      const { last_login: lastLogin, last_ip: lastIp } = res.body.data;
      expect(Number.isInteger(lastLogin)).toBe(true);
      expect(lastLogin).toBeGreaterThanOrEqual(before);
      expect(lastLogin).toBeLessThanOrEqual(after);
      expect(lastIp).toBe('127.0.0.1');
    });

    it('when the exchange carries X-Forwarded-For and no proxy is trusted, then last_ip is the socket address', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      await t
        .http()
        .post('/api/v1/auth/token')
        .set('X-Forwarded-For', '203.0.113.9')
        .send({ jwt: signRequestToken(key.appname, key.appkey) })
        .expect(200);

      const res = await get(key.appname);

      expect(res.body.data.last_ip).toBe('127.0.0.1');
    });

    it('when a request token is refused, then last_login and last_ip stay null', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      await t
        .http()
        .post('/api/v1/auth/token')
        .send({ jwt: signRequestToken(key.appname, `${key.appkey}x`) })
        .expect(401);

      const res = await get(key.appname);

      expect(res.body.data).toEqual(expect.objectContaining({ last_login: null, last_ip: null }));
    });
  });

  describe('errors', () => {
    it('when the appname does not exist, then 404 NotFound', async () => {
      const res = await get(randomName('missing'));

      expectError(res, 404, 'NotFound');
    });

    it('when the appname in the path breaks the appname rules, then 400 BadRequest', async () => {
      const res = await get('Not-Lowercase');

      expectError(res, 400, 'BadRequest', 'appname');
    });
  });

  // This route checks the bearer's session in the same statement that reads the key: nothing of the
  // key may reach a caller whose session is no longer live, and the 401 comes before anything else.
  describe('the bearer check made with the read', () => {
    const expectRefused = (res: Response, appname: string) => {
      expectInvalidToken(res);
      expect(res.text).not.toContain(appname);
    };

    it('when the caller’s user is disabled after logging in, then 401 and nothing of the key', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'kept from a disabled user' });
      const reader = await createUser(t, { role: 'admin' });
      const login = await loginAs(t, reader);
      expect((await t.http().get(keyPath(key.appname)).set(bearer(login.access_token))).status).toBe(200);

      await t.services.users.disable(reader.username, CLI_CONTEXT);
      const res = await t.http().get(keyPath(key.appname)).set(bearer(login.access_token));

      expectRefused(res, key.appname);
    });

    it('when the caller’s session was revoked, then 401 and nothing of the key', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const reader = await createUser(t, { role: 'viewer' });
      const login = await loginAs(t, reader);

      const revoked = await t.http().post('/api/auth/bearer/revoke').type('form').send({ token: login.refresh_token });
      expect(revoked.status).toBe(200);
      const res = await t.http().get(keyPath(key.appname)).set(bearer(login.access_token));

      expectRefused(res, key.appname);
    });

    it('when the calling API key reads itself after a regen without grace, then 401', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const login = await loginWithApiKey(t, key);
      expect((await t.http().get(keyPath(key.appname)).set(bearer(login.access_token))).status).toBe(200);

      const regen = await t.http().put(`${keyPath(key.appname)}/regen`).set(bearer(admin)).send({});
      expect(regen.status).toBe(200);
      const res = await t.http().get(keyPath(key.appname)).set(bearer(login.access_token));

      expectRefused(res, key.appname);
    });

    it('when there is no token and the appname breaks the rules, then 401 before the 400', async () => {
      const res = await t.http().get(keyPath('Not-Lowercase'));

      expectError(res, 401, 'Unauthorized');
    });

    it('when the path holds a malformed escape, then 401 without a token and 400 with one', async () => {
      const path = '/api/v1/api-keys/%E0%A4%A';

      const anonymous = await t.http().get(path);
      const authenticated = await t.http().get(path).set(bearer(admin));

      expect(anonymous.status).toBe(401);
      expectError(authenticated, 400, 'BadRequest');
    });

    it('when the path ends in a slash, then the key is read as without one', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'trailing slash' });

      const res = await t.http().get(`${keyPath(key.appname)}/`).set(bearer(admin));

      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ appname: key.appname, description: 'trailing slash' });
    });

    it('when the appname in the path holds a NUL byte, then 400 BadRequest, not a database error', async () => {
      const res = await t.http().get('/api/v1/api-keys/app%00name').set(bearer(admin));

      expectError(res, 400, 'BadRequest', 'appname');
    });
  });
});
