import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { errorBody, keyPath, nowSeconds } from './support';

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

      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody(404, 'NotFound'));
    });

    it('when the appname in the path breaks the appname rules, then 400 BadRequest', async () => {
      const res = await get('Not-Lowercase');

      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody(400, 'BadRequest', 'appname'));
    });
  });
});
