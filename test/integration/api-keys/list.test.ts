import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';
import { KEYS } from './support';

type Listed = { appname: string };
const names = (data: Listed[]) => data.map((k) => k.appname);

describe('GET /api/v1/api-keys (list)', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  const list = (query: string = '') => t.http().get(`${KEYS}${query}`).set(bearer(admin));

  /** Creates keys named prefix+suffix, in the order given, as one admin. */
  async function createNamed(prefix: string, suffixes: string[]): Promise<string[]> {
    const created: string[] = [];
    for (const suffix of suffixes) {
      const res = await t
        .http()
        .post(KEYS)
        .set(bearer(admin))
        .send({ appname: prefix + suffix, roles: [] });
      expect(res.status).toBe(201);
      created.push(prefix + suffix);
    }
    return created;
  }

  describe('happy path', () => {
    it('when keys exist, then 200 with every record in the envelope, counted, and no appkey', async () => {
      const key = await createApiKey(t, { role: 'viewer', description: 'listed' });

      const res = await list();

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ meta: { code: 200, count: res.body.data.length }, data: expect.any(Array) });
      expect(res.body.data).toContainEqual({
        appname: key.appname,
        description: 'listed',
        roles: ['viewer'],
        last_login: null,
        last_ip: null,
      });
      for (const record of res.body.data) {
        expect(Object.keys(record).sort()).toEqual(['appname', 'description', 'last_ip', 'last_login', 'roles']);
      }
    });

    it('when keys have logged in, have each role or none, and odd descriptions, then each listed record is exactly its GET record', async () => {
      const keys = await Promise.all(
        (['viewer', 'editor', 'admin', null] as const).map((role, i) =>
          createApiKey(t, { role, description: ['quote " and \\ backslash', 'ünïcødé ✓ 🔑', 'tab\tnew\nline', ''][i] }),
        ),
      );
      await loginWithApiKey(t, keys[0]!);

      const res = await list();

      const listed = new Map((res.body.data as Listed[]).map((record) => [record.appname, record]));
      for (const key of keys) {
        const single = await t.http().get(`${KEYS}/${key.appname}`).set(bearer(admin));
        expect(listed.get(key.appname)).toEqual(single.body.data);
      }
      expect(listed.get(keys[0]!.appname)).toMatchObject({ last_login: expect.any(Number), last_ip: expect.any(String) });
    });

    it('when keys differ only after a shared prefix, then they are ordered by appname in byte order', async () => {
      const prefix = randomName('order');
      // Byte order: '-' (0x2d) < '.' (0x2e) < '0' (0x30) < '_' (0x5f) < 'a' (0x61); a locale collation differs.
      await createNamed(prefix, ['ax', '_x', '0x', '.x', '-x']);

      const res = await list();

      const ours = names(res.body.data).filter((n) => n.startsWith(prefix));
      expect(ours).toEqual([`${prefix}-x`, `${prefix}.x`, `${prefix}0x`, `${prefix}_x`, `${prefix}ax`]);
    });

    it('when listing, then the whole list is in byte order of appname', async () => {
      await createNamed(randomName('zz'), ['', '-1', 'a']);

      const res = await list();

      const all = names(res.body.data);
      expect(all).toEqual([...all].sort());
    });

    it('when limit and after are given, then pages follow one another without gaps or repeats', async () => {
      const prefix = randomName('page');
      const created = await createNamed(prefix, ['-e', '-a', '-d', '-b', '-c']);
      const [a, b, c, d, e] = [...created].sort();

      const page1 = await list(`?limit=2&after=${prefix}`);
      const page2 = await list(`?limit=2&after=${b}`);
      const page3 = await list(`?limit=2&after=${d}`);

      expect(page1.status).toBe(200);
      expect(page1.body.meta).toEqual({ code: 200, count: 2 });
      expect(names(page1.body.data)).toEqual([a, b]);
      expect(names(page2.body.data)).toEqual([c, d]);
      expect(names(page3.body.data)[0]).toBe(e);
    });

    it('when after names the last key, then the page is empty and counted 0', async () => {
      const res = await list('?after=zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz');

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ meta: { code: 200, count: 0 }, data: [] });
    });

    it('when limit is 1, then exactly one record is returned', async () => {
      await createApiKey(t);

      const res = await list('?limit=1');

      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ code: 200, count: 1 });
      expect(res.body.data).toHaveLength(1);
    });
  });

  describe('errors', () => {
    it.each([
      ['0', '?limit=0'],
      ['1001', '?limit=1001'],
      ['not a number', '?limit=abc'],
      ['negative', '?limit=-1'],
      ['a fraction', '?limit=2.5'],
      ['repeated', '?limit=1&limit=2'],
    ])('when limit is %s, then 400 naming limit', async (_case, query) => {
      const res = await list(query);

      expectError(res, 400, 'BadRequest', 'limit');
    });

    it('when an unknown query parameter is sent, then 400 naming it', async () => {
      const res = await list('?offset=10');

      expectError(res, 400, 'BadRequest', 'offset');
    });
  });

  describe('with more than 1000 keys', () => {
    beforeAll(async () => {
      const prefix = randomName('bulk');
      const suffixes = Array.from({ length: 1001 }, (_, i) => `-${String(i).padStart(4, '0')}`);
      // A fresh admin per batch, so no principal comes near the per-principal rate limit.
      for (let i = 0; i < suffixes.length; i += 50) {
        const seeder = await tokenForRole(t, 'admin');
        await Promise.all(
          suffixes.slice(i, i + 50).map((s) =>
            t
              .http()
              .post(KEYS)
              .set(bearer(seeder))
              .send({ appname: prefix + s, roles: [] })
              .expect(201),
          ),
        );
      }
    }, 60_000);

    it('when no limit is given, then 1000 records are returned', async () => {
      const res = await list();

      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ code: 200, count: 1000 });
      expect(res.body.data).toHaveLength(1000);
      // The page is written in parts (see sendJsonParts): the declared length is the body's.
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    });

    it('when limit is 1000, then 1000 records are returned and the next page continues after the last', async () => {
      const first = await list('?limit=1000');
      const last = names(first.body.data).at(-1);
      const rest = await list(`?limit=1000&after=${last}`);

      expect(first.body.meta.count).toBe(1000);
      expect(rest.status).toBe(200);
      expect(rest.body.data.length).toBeGreaterThan(0);
      expect(names(rest.body.data)[0]! > last!).toBe(true);
      expect(names(rest.body.data)).not.toContain(last);
    });
  });
});
