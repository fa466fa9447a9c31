import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, loginWithApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';
import { KEYS, readKey } from './support';

describe('POST /api/v1/api-keys (create)', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  const create = (body: unknown) => t.http().post(KEYS).set(bearer(admin)).send(body as object);

  /** Every appname present in the list, to show a refused create left nothing behind. */
  async function listedAppnames(): Promise<string[]> {
    const res = await t.http().get(KEYS).set(bearer(admin));
    return (res.body.data as { appname: string }[]).map((k) => k.appname);
  }

  describe('happy path', () => {
    it('when an admin creates a key, then 201 with the envelope, the record and the appkey', async () => {
      const appname = randomName('create');

      const res = await create({ appname, description: 'billing worker', roles: ['editor'] });

      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        meta: { code: 201, count: 1 },
        data: {
          appname,
          description: 'billing worker',
          roles: ['editor'],
          last_login: null,
          last_ip: null,
          appkey: expect.any(String),
        },
      });
    });

    it('when a key is created, then the answer, which holds the appkey, carries Cache-Control: no-store', async () => {
      const res = await create({ appname: randomName('nostore'), roles: [] });

      expect(res.status).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('when the description is omitted, then the key is stored with description ""', async () => {
      const appname = randomName('nodesc');

      const res = await create({ appname, roles: ['viewer'] });

      expect(res.status).toBe(201);
      expect(res.body.data.description).toBe('');
      expect((await readKey(t, appname)).body.data.description).toBe('');
    });

    it('when roles is empty, then the key is created with no role', async () => {
      const appname = randomName('norole');

      const res = await create({ appname, description: 'd', roles: [] });

      expect(res.status).toBe(201);
      expect(res.body.data.roles).toEqual([]);
      expect((await readKey(t, appname)).body.data.roles).toEqual([]);
    });

    it('when a key is created, then its appkey is ak_ followed by at least 256 bits of URL-safe characters', async () => {
      const res = await create({ appname: randomName('fmt'), roles: [] });

      const appkey: string = res.body.data.appkey;
      expect(appkey).toMatch(/^ak_[A-Za-z0-9_-]+$/);
      // 256 bits is 43 base64url characters, and a checksum follows them.
      expect(appkey.length).toBeGreaterThan('ak_'.length + 43);
    });

    it('when two keys are created, then they get different appkeys', async () => {
      const first = await create({ appname: randomName('two'), roles: [] });
      const second = await create({ appname: randomName('two'), roles: [] });

      expect(first.body.data.appkey).not.toEqual(second.body.data.appkey);
    });

    it('when the returned appkey signs a request token, then it is exchanged for an access token', async () => {
      const appname = randomName('usable');
      const res = await create({ appname, roles: ['viewer'] });

      const tokens = await loginWithApiKey(t, { appname, appkey: res.body.data.appkey });

      expect(tokens.access_token).toEqual(expect.any(String));
    });

    it.each([
      ['64 characters long', `a${'b'.repeat(63)}`],
      ['one digit', '7'],
      ['dots, underscores and hyphens after the first character', '0x._-y'],
    ])('when the appname is %s, then it is accepted', async (_case, appname) => {
      const res = await create({ appname, roles: [] });

      expect(res.status).toBe(201);
      expect(res.body.data.appname).toBe(appname);
    });

    it('when the description is 1024 characters outside the BMP (emoji), then it is accepted', async () => {
      const description = '\u{1F600}'.repeat(1024);

      const res = await create({ appname: randomName('emoji'), description, roles: [] });

      expect(res.status).toBe(201);
      expect(res.body.data.description).toBe(description);
    });

    it('when the description is exactly 1024 characters, then it is accepted', async () => {
      const description = 'x'.repeat(1024);

      const res = await create({ appname: randomName('long'), description, roles: [] });

      expect(res.status).toBe(201);
      expect(res.body.data.description).toBe(description);
    });
  });

  describe('errors', () => {
    it('when the description contains a NUL character, then 400 BadRequest rather than a 500, and nothing is created', async () => {
      const appname = randomName('nul');

      const res = await create({ appname, description: 'before\u0000after', roles: [] });

      expectError(res, 400, 'BadRequest');
      expect(await listedAppnames()).not.toContain(appname);
    });

    it('when the appname already exists, then 409 Conflict and the existing key is unchanged', async () => {
      const appname = randomName('dup');
      const original = await create({ appname, description: 'first', roles: ['viewer'] });

      const res = await create({ appname, description: 'second', roles: ['admin'] });

      expectError(res, 409, 'Conflict');
      expect((await readKey(t, appname)).body.data).toEqual(
        expect.objectContaining({ description: 'first', roles: ['viewer'] }),
      );
      await expect(loginWithApiKey(t, { appname, appkey: original.body.data.appkey })).resolves.toBeDefined();
    });

    it.each([
      ['has an uppercase letter', 'Billing'],
      ['is 65 characters long', `a${'b'.repeat(64)}`],
      ['starts with a dot', '.hidden'],
      ['starts with a hyphen', '-dash'],
      ['is empty', ''],
      ['contains a slash', 'a/b'],
    ])('when the appname %s, then 400 naming appname and nothing is created', async (_case, appname) => {
      const res = await create({ appname, roles: [] });

      expectError(res, 400, 'BadRequest', 'appname');
      expect(await listedAppnames()).not.toContain(appname);
    });

    it('when the appname is missing, then 400 naming appname', async () => {
      const res = await create({ description: 'd', roles: [] });

      expectError(res, 400, 'BadRequest', 'appname');
    });

    it('when roles is missing, then 400 naming roles and nothing is created', async () => {
      const appname = randomName('noroles');

      const res = await create({ appname, description: 'd' });

      expectError(res, 400, 'BadRequest', 'roles');
      expect(await listedAppnames()).not.toContain(appname);
    });

    it('when a role name is unknown, then 400 naming roles and nothing is created', async () => {
      const appname = randomName('badrole');

      const res = await create({ appname, roles: ['superuser'] });

      expectError(res, 400, 'BadRequest', 'roles');
      expect(await listedAppnames()).not.toContain(appname);
    });

    it('when two roles are given, then 400 naming roles and nothing is created', async () => {
      const appname = randomName('tworoles');

      const res = await create({ appname, roles: ['viewer', 'editor'] });

      expectError(res, 400, 'BadRequest', 'roles');
      expect(await listedAppnames()).not.toContain(appname);
    });

    it('when roles is a string instead of an array, then 400 naming roles', async () => {
      const res = await create({ appname: randomName('strrole'), roles: 'viewer' });

      expectError(res, 400, 'BadRequest', 'roles');
    });

    it('when the description is 1025 characters, then 400 naming description and nothing is created', async () => {
      const appname = randomName('toolong');

      const res = await create({ appname, description: 'x'.repeat(1025), roles: [] });

      expectError(res, 400, 'BadRequest', 'description');
      expect(await listedAppnames()).not.toContain(appname);
    });

    it.each([
      ['appkey', 'ak_chosen_by_the_client'],
      ['last_login', 0],
      ['last_ip', '10.0.0.1'],
      ['owner', 'someone'],
    ])('when the body carries the unknown field %s, then 400 naming it and nothing is created', async (field, value) => {
      const appname = randomName('strict');

      const res = await create({ appname, roles: [], [field]: value });

      expectError(res, 400, 'BadRequest', field);
      expect(await listedAppnames()).not.toContain(appname);
    });
  });

  describe('concurrency', () => {
    it('when 20 creates of one appname race, then exactly one is 201 and the rest are 409 Conflict', async () => {
      const appname = randomName('race');

      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => create({ appname, description: `attempt ${i}`, roles: [] })),
      );

      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([201, ...Array<number>(19).fill(409)]);
      for (const r of responses.filter((r) => r.status === 409)) expectError(r, 409, 'Conflict');
      const winner = responses.find((r) => r.status === 201)!;
      expect((await readKey(t, appname)).body.data.description).toBe(winner.body.data.description);
    });
  });
});
