import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { expectError, expectInvalidToken } from '../../helpers/errors';
import { KEYS, keyPath, readKey } from './support';

describe('DELETE /api/v1/api-keys/{appname} (delete)', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  const remove = (appname: string) => t.http().delete(keyPath(appname)).set(bearer(admin));

  describe('deleting a key, its tokens, and its name', () => {
    it('when an admin deletes a key, then 204 with an empty body and the key is gone', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await remove(key.appname);

      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['content-type']).toBeUndefined();
      expect((await readKey(t, key.appname)).status).toBe(404);
    });

    it('when a key is deleted, then its access token gets 401 invalid_token on the next call', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const { access_token: token } = await loginWithApiKey(t, key);
      await t.http().get(KEYS).set(bearer(token)).expect(200);

      await remove(key.appname).expect(204);
      const res = await t.http().get(KEYS).set(bearer(token));

      expectInvalidToken(res);
    });

    it('when a key is deleted, then its refresh token is refused with 401', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const { refresh_token: refresh } = await loginWithApiKey(t, key);

      await remove(key.appname).expect(204);
      const res = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: refresh });

      expectError(res, 401, 'Unauthorized');
    });

    it('when a key is deleted, then a request token signed with its appkey is refused with 401', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      await remove(key.appname).expect(204);
      const res = await t
        .http()
        .post('/api/v1/auth/token')
        .send({ jwt: signRequestToken(key.appname, key.appkey) });

      expectError(res, 401, 'Unauthorized');
    });

    it('when a deleted appname is created again, then 201 with a fresh record and a new appkey', async () => {
      const old = await createApiKey(t, { role: 'editor', description: 'first life' });
      await remove(old.appname).expect(204);

      const res = await t
        .http()
        .post(KEYS)
        .set(bearer(admin))
        .send({ appname: old.appname, description: 'second life', roles: ['viewer'] });

      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        appname: old.appname,
        description: 'second life',
        roles: ['viewer'],
        last_login: null,
        last_ip: null,
        appkey: expect.any(String),
      });
      expect(res.body.data.appkey).not.toBe(old.appkey);
    });

    it('when a deleted appname is created again, then tokens and the appkey of the old key still fail', async () => {
      const old = await createApiKey(t, { role: 'viewer' });
      const { access_token: oldToken } = await loginWithApiKey(t, old);
      await remove(old.appname).expect(204);

      await createApiKey(t, { appname: old.appname, role: 'viewer' });

      expect((await t.http().get(KEYS).set(bearer(oldToken))).status).toBe(401);
      const exchange = await t
        .http()
        .post('/api/v1/auth/token')
        .send({ jwt: signRequestToken(old.appname, old.appkey) });
      expect(exchange.status).toBe(401);
    });
  });

  describe('errors', () => {
    it('when the appname does not exist, then 404 NotFound', async () => {
      const res = await remove(randomName('missing'));

      expectError(res, 404, 'NotFound');
    });

    it('when the same key is deleted twice, then the second delete is 404 NotFound', async () => {
      const key = await createApiKey(t);
      await remove(key.appname).expect(204);

      const res = await remove(key.appname);

      expectError(res, 404, 'NotFound');
    });

    it('when the appname in the path breaks the appname rules, then 400 BadRequest', async () => {
      const res = await remove('_leading-underscore');

      expectError(res, 400, 'BadRequest', 'appname');
    });
  });
});
