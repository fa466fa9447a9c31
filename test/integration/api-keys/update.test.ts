import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';
import { keyPath, readKey } from './support';

describe('PUT /api/v1/api-keys/{appname} (update)', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  const update = (appname: string, body?: unknown) => {
    const req = t.http().put(keyPath(appname)).set(bearer(admin));
    return body === undefined ? req : req.send(body as object);
  };

  describe('happy path', () => {
    it('when an admin updates description and roles, then 200 with the new record and no appkey', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'old' });

      const res = await update(key.appname, { description: 'new', roles: ['editor'] });

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        meta: { code: 200, count: 1 },
        data: { appname: key.appname, description: 'new', roles: ['editor'], last_login: null, last_ip: null },
      });
      expect((await readKey(t, key.appname)).body).toEqual(res.body);
    });

    it('when the description is omitted, then it becomes ""', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'will vanish' });

      const res = await update(key.appname, { roles: ['viewer'] });

      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(expect.objectContaining({ description: '', roles: ['viewer'] }));
      expect((await readKey(t, key.appname)).body.data.description).toBe('');
    });

    it('when roles is omitted, then the key is left with no role', async () => {
      const key = await createApiKey(t, { role: 'editor', description: 'kept' });

      const res = await update(key.appname, { description: 'kept' });

      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(expect.objectContaining({ description: 'kept', roles: [] }));
      expect((await readKey(t, key.appname)).body.data.roles).toEqual([]);
    });

    it('when the body is {}, then description and roles are both emptied', async () => {
      const key = await createApiKey(t, { role: 'editor', description: 'full' });

      const res = await update(key.appname, {});

      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(expect.objectContaining({ appname: key.appname, description: '', roles: [] }));
    });

    it('when a key that has logged in is updated, then last_login and last_ip are kept', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      await loginWithApiKey(t, key);
      const before = (await readKey(t, key.appname)).body.data;

      const res = await update(key.appname, { description: 'changed', roles: ['viewer'] });

      expect(res.body.data).toEqual(expect.objectContaining({ last_login: before.last_login, last_ip: '127.0.0.1' }));
    });

    it('when a key is updated, then its appkey still exchanges for tokens and its existing token still works', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const { access_token: existing } = await loginWithApiKey(t, key);

      await update(key.appname, { description: 'renamed purpose', roles: ['viewer'] }).expect(200);

      await expect(loginWithApiKey(t, key)).resolves.toBeDefined();
      const res = await t.http().get(keyPath(key.appname)).set(bearer(existing));
      expect(res.status).toBe(200);
    });
  });

  describe('errors', () => {
    it.each([
      ['appname', 'renamed'],
      ['appkey', 'ak_chosen_by_the_client'],
      ['last_login', 0],
      ['last_ip', '10.0.0.1'],
      ['color', 'blue'],
    ])('when the body carries the field %s, then 400 naming it and the key is unchanged', async (field, value) => {
      const key = await createApiKey(t, { role: 'viewer', description: 'original' });
      const before = (await readKey(t, key.appname)).body;

      const res = await update(key.appname, { description: 'changed', roles: ['editor'], [field]: value });

      expectError(res, 400, 'BadRequest', field);
      expect((await readKey(t, key.appname)).body).toEqual(before);
    });

    it.each([
      ['an unknown role', { roles: ['owner'] }, 'roles'],
      ['two roles', { roles: ['viewer', 'editor'] }, 'roles'],
      ['a description of 1025 characters', { description: 'x'.repeat(1025), roles: [] }, 'description'],
      ['a description that is not a string', { description: 42, roles: [] }, 'description'],
    ])('when the body has %s, then 400 naming the field and the key is unchanged', async (_case, body, field) => {
      const key = await createApiKey(t, { role: 'viewer', description: 'original' });
      const before = (await readKey(t, key.appname)).body;

      const res = await update(key.appname, body);

      expectError(res, 400, 'BadRequest', field);
      expect((await readKey(t, key.appname)).body).toEqual(before);
    });

    it('when the description contains a NUL character, then 400 BadRequest rather than a 500, and the key is unchanged', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'original' });
      const before = (await readKey(t, key.appname)).body;

      const res = await update(key.appname, { description: 'before\u0000after', roles: ['viewer'] });

      expectError(res, 400, 'BadRequest');
      expect((await readKey(t, key.appname)).body).toEqual(before);
    });

    it('when no body is sent, then 400 and the key is unchanged', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'original' });
      const before = (await readKey(t, key.appname)).body;

      const res = await update(key.appname);

      expectError(res, 400, 'BadRequest');
      expect((await readKey(t, key.appname)).body).toEqual(before);
    });

    it('when the body is a JSON array, then 400 and the key is unchanged', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'original' });
      const before = (await readKey(t, key.appname)).body;

      const res = await update(key.appname, [{ description: 'x' }]);

      expectError(res, 400, 'BadRequest');
      expect((await readKey(t, key.appname)).body).toEqual(before);
    });

    it('when the appname does not exist, then 404 NotFound and nothing is created', async () => {
      const appname = randomName('missing');

      const res = await update(appname, { description: 'd', roles: [] });

      expectError(res, 404, 'NotFound');
      expect((await readKey(t, appname)).status).toBe(404);
    });
  });
});
