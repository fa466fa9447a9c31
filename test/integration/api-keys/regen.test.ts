import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { expectError, expectInvalidToken } from '../../helpers/errors';
import { keyPath, readKey, regenPath } from './support';

describe('PUT /api/v1/api-keys/{appname}/regen (regenerate)', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  const regen = (appname: string, body: unknown) =>
    t
      .http()
      .put(regenPath(appname))
      .set(bearer(admin))
      .send(body as object);
  const exchange = (appname: string, appkey: string) =>
    t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(appname, appkey) });

  describe('happy path', () => {
    it('when an admin regenerates a key, then 200 with the record and a new appkey', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'old' });

      const res = await regen(key.appname, { description: 'rotated', roles: ['editor'] });

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        meta: { code: 200, count: 1 },
        data: {
          appname: key.appname,
          description: 'rotated',
          roles: ['editor'],
          last_login: null,
          last_ip: null,
          appkey: expect.stringMatching(/^ak_[A-Za-z0-9_-]{44,}$/),
        },
      });
      expect(res.body.data.appkey).not.toBe(key.appkey);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('when the description is omitted, then it becomes ""', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'will vanish' });

      const res = await regen(key.appname, { roles: ['viewer'] });

      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(expect.objectContaining({ description: '', roles: ['viewer'] }));
      expect((await readKey(t, key.appname)).body.data.description).toBe('');
    });

    it('when roles is omitted, then the key is left with no role', async () => {
      const key = await createApiKey(t, { role: 'editor', description: 'kept' });

      const res = await regen(key.appname, { description: 'kept' });

      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(expect.objectContaining({ description: 'kept', roles: [] }));
      expect((await readKey(t, key.appname)).body.data.roles).toEqual([]);
    });

    it('when a key is regenerated, then the new appkey exchanges for tokens', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await regen(key.appname, { roles: ['viewer'] });
      const tokens = await loginWithApiKey(t, { appname: key.appname, appkey: res.body.data.appkey });

      expect(tokens.access_token).toEqual(expect.any(String));
    });
  });

  describe('the old appkey and its tokens', () => {
    it('when a request token is signed with the old appkey after regen, then the exchange is 401', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      await regen(key.appname, { roles: ['viewer'] }).expect(200);
      const res = await exchange(key.appname, key.appkey);

      expectError(res, 401, 'Unauthorized');
    });

    it('when an access token obtained through the old appkey is used after regen, then 401 invalid_token', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const { access_token: old } = await loginWithApiKey(t, key);
      await t.http().get(keyPath(key.appname)).set(bearer(old)).expect(200);

      await regen(key.appname, { roles: ['viewer'] }).expect(200);
      const res = await t.http().get(keyPath(key.appname)).set(bearer(old));

      expectInvalidToken(res);
    });

    it('when a refresh token obtained through the old appkey is used after regen, then 401', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const { refresh_token: oldRefresh } = await loginWithApiKey(t, key);

      await regen(key.appname, { roles: ['viewer'] }).expect(200);
      const res = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: oldRefresh });

      expectError(res, 401, 'Unauthorized');
    });

    it('when one key is regenerated, then another key keeps its appkey and tokens', async () => {
      const rotated = await createApiKey(t, { role: 'viewer' });
      const bystander = await createApiKey(t, { role: 'viewer' });
      const { access_token: bystanderToken } = await loginWithApiKey(t, bystander);

      await regen(rotated.appname, { roles: ['viewer'] }).expect(200);

      await t.http().get(keyPath(bystander.appname)).set(bearer(bystanderToken)).expect(200);
      expect((await exchange(bystander.appname, bystander.appkey)).status).toBe(200);
    });
  });

  describe('errors', () => {
    it.each([
      ['appname', 'renamed'],
      ['appkey', 'ak_chosen_by_the_client'],
      ['last_login', 0],
      ['last_ip', '10.0.0.1'],
      ['expires', 3600],
    ])('when the body carries the field %s, then 400 naming it and the old appkey still works', async (field, value) => {
      const key = await createApiKey(t, { role: 'viewer', description: 'original' });
      const before = (await readKey(t, key.appname)).body;

      const res = await regen(key.appname, { description: 'changed', roles: ['viewer'], [field]: value });

      expectError(res, 400, 'BadRequest', field);
      expect((await readKey(t, key.appname)).body).toEqual(before);
      expect((await exchange(key.appname, key.appkey)).status).toBe(200);
    });

    it.each([
      ['an unknown role', { roles: ['root'] }, 'roles'],
      ['two roles', { roles: ['viewer', 'admin'] }, 'roles'],
      ['a description of 1025 characters', { description: 'x'.repeat(1025) }, 'description'],
    ])('when the body has %s, then 400 naming the field and the old appkey still works', async (_case, body, field) => {
      const key = await createApiKey(t, { role: 'viewer', description: 'original' });

      const res = await regen(key.appname, body);

      expectError(res, 400, 'BadRequest', field);
      expect((await exchange(key.appname, key.appkey)).status).toBe(200);
    });

    it('when the appname does not exist, then 404 NotFound and nothing is created', async () => {
      const appname = randomName('missing');

      const res = await regen(appname, { roles: [] });

      expectError(res, 404, 'NotFound');
      expect((await readKey(t, appname)).status).toBe(404);
    });
  });
});
