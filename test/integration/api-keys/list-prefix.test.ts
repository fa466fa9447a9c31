import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, randomName, tokenForRole } from '../../helpers/factories';
import { expectError, expectMissingToken } from '../../helpers/errors';
import { KEYS } from './support';

type Listed = { appname: string };
const names = (data: Listed[]) => data.map((k) => k.appname);

/** The whole message of a prefix the rule refuses: one line naming the field, never the same line twice. */
const PREFIX_REFUSED = /^query\.prefix: must be 1 to 64 characters of a-z 0-9 \. _ -$/;

describe('GET /api/v1/api-keys?prefix= (list filtered by appname prefix)', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  const list = (query: string, token: string = admin) => t.http().get(`${KEYS}${query}`).set(bearer(token));

  /** Creates keys with exactly these appnames, as one admin; returns them in byte order, as the list sorts. */
  async function createKeys(appnames: string[]): Promise<string[]> {
    for (const appname of appnames) {
      const res = await t.http().post(KEYS).set(bearer(admin)).send({ appname, roles: [] });
      expect(res.status).toBe(201);
    }
    return [...appnames].sort();
  }

  describe('filtering', () => {
    it('when a prefix is given, then exactly the keys starting with it are listed, in byte order, and counted', async () => {
      const base = randomName('pfx');
      const matching = await createKeys([`${base}-b`, `${base}-a`, `${base}-a.1`, `${base}-a0`]);
      await createKeys([`${base}`, `${base}_a`, `${base}.a`, randomName('other')]);

      const res = await list(`?prefix=${base}-`);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ meta: { code: 200, count: 4 }, data: expect.any(Array) });
      expect(names(res.body.data)).toEqual(matching);
      // The records are the list's records, not a reduced form.
      expect(res.body.data[0]).toEqual({ appname: matching[0], description: '', roles: [], last_login: null, last_ip: null });
    });

    it('when the prefix is a whole appname, then that key is listed with the longer ones that start with it, and the next name in byte order is not', async () => {
      // "-" (0x2d) is followed by "." (0x2e): `${base}a.` is the first name after every `${base}a-…`.
      const base = randomName('edge');
      const matching = await createKeys([`${base}a-`, `${base}a-0`, `${base}a--`, `${base}a-z`]);
      await createKeys([`${base}a.`, `${base}a.-`, `${base}a`, `${base}a0`]);

      const res = await list(`?prefix=${base}a-`);

      expect(names(res.body.data)).toEqual(matching);
    });

    it('when the prefix ends in "z", the last character of the alphabet, then the keys after it are still found and nothing beyond', async () => {
      const base = randomName('zend');
      const matching = await createKeys([`${base}z`, `${base}zz`, `${base}z_`, `${base}z-9`]);
      await createKeys([`${base}y`, `${base}yz`, `${base}0`]);

      const res = await list(`?prefix=${base}z`);

      expect(names(res.body.data)).toEqual(matching);
    });

    it('when the prefix holds "_", then it matches only "_" (not any character, as in LIKE): "a_" does not match "abc"', async () => {
      const base = randomName('under');
      await createKeys([`${base}abc`, `${base}a-c`, `${base}a.c`, `${base}a_c`, `${base}a_`]);

      const res = await list(`?prefix=${base}a_`);

      expect(names(res.body.data)).toEqual([`${base}a_`, `${base}a_c`]);
    });

    it('when the prefix holds ".", then it matches only "." (not any character, as in a regular expression)', async () => {
      const base = randomName('dot');
      await createKeys([`${base}abc`, `${base}a-c`, `${base}a_c`, `${base}a.c`]);

      const res = await list(`?prefix=${base}a.`);

      expect(names(res.body.data)).toEqual([`${base}a.c`]);
    });

    it('when the prefix is 64 characters, the most an appname has, then the key of that name is listed', async () => {
      const appname = randomName('long').padEnd(64, 'x');
      await createKeys([appname, appname.slice(0, 63)]);

      const res = await list(`?prefix=${appname}`);

      expect(res.status).toBe(200);
      expect(names(res.body.data)).toEqual([appname]);
    });

    it('when no key starts with the prefix, then 200 with an empty page counted 0', async () => {
      const res = await list(`?prefix=${randomName('nothing')}`);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ meta: { code: 200, count: 0 }, data: [] });
    });
  });

  describe('with limit and after', () => {
    let base: string;
    let matching: string[];
    beforeAll(async () => {
      base = randomName('paged');
      // Seven keys in the filter, with neighbours on both sides of it in byte order.
      matching = await createKeys(['6', '0', '5', '1', '4', '2', '3'].map((d) => `${base}-m${d}`));
      await createKeys([`${base}-l`, `${base}-l9`, `${base}-n`, `${base}-n0`, `${base}-`]);
    });

    it('when the filtered set is larger than a page, then following after from page to page lists it exactly, without gaps, repeats or other keys', async () => {
      const seen: string[] = [];
      const counts: number[] = [];
      let after = '';
      for (let page = 0; page < 10; page++) {
        const res = await list(`?prefix=${base}-m&limit=3${after}`);
        expect(res.status).toBe(200);
        counts.push(res.body.meta.count);
        seen.push(...names(res.body.data));
        if (res.body.data.length < 3) break;
        after = `&after=${seen.at(-1)}`;
      }

      expect(seen).toEqual(matching);
      expect(counts).toEqual([3, 3, 1]);
    });

    it('when after sorts before every key of the prefix, then the page starts at the prefix\'s first key', async () => {
      const res = await list(`?prefix=${base}-m&after=${base}-l9&limit=2`);

      expect(names(res.body.data)).toEqual(matching.slice(0, 2));
    });

    it('when after sorts past every key of the prefix, then the page is empty', async () => {
      const res = await list(`?prefix=${base}-m&after=${base}-n`);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ meta: { code: 200, count: 0 }, data: [] });
    });

    it('when a viewer filters, then it gets the same filtered page as an admin', async () => {
      const viewer = await tokenForRole(t, 'viewer');

      const res = await list(`?prefix=${base}-m&limit=5`, viewer);

      expect(res.status).toBe(200);
      expect(names(res.body.data)).toEqual(matching.slice(0, 5));
    });
  });

  describe('errors', () => {
    it.each([
      ['empty', '?prefix='],
      ['65 characters', `?prefix=${'a'.repeat(65)}`],
      ['uppercase', '?prefix=Abc'],
      ['a space (encoded)', '?prefix=a%20b'],
      ['a space (as +)', '?prefix=a+b'],
      ['"%" (encoded)', '?prefix=a%25'],
      ['a bare "%"', '?prefix=a%'],
      ['"*"', '?prefix=a*'],
      ['non-ASCII', '?prefix=%C3%A9'],
      ['a slash', '?prefix=a%2Fb'],
    ])('when the prefix is %s, then 400 naming prefix, and only once', async (_case, query) => {
      const res = await list(query);

      expectError(res, 400, 'BadRequest', PREFIX_REFUSED);
    });

    // A NUL is refused for every request string before any schema, with its own message.
    it('when the prefix holds NUL, then 400 naming prefix', async () => {
      const res = await list('?prefix=a%00');

      expectError(res, 400, 'BadRequest', /^query\.prefix: must not contain NUL characters/);
    });

    it('when prefix is given twice, then 400 naming prefix', async () => {
      const res = await list('?prefix=a&prefix=b');

      expectError(res, 400, 'BadRequest', /^query\.prefix: /);
    });

    it('when prefix and limit are both bad, then 400 naming both', async () => {
      const res = await list('?prefix=A&limit=0');

      expectError(res, 400, 'BadRequest', /query\.limit: .*query\.prefix: |query\.prefix: .*query\.limit: /);
    });

    it('when no token is sent with a bad prefix, then 401 before 400', async () => {
      const res = await t.http().get(`${KEYS}?prefix=%25`);

      expectMissingToken(res);
    });

    it('when a principal without a role filters, then 403', async () => {
      const noRole = await tokenForRole(t, null);

      const res = await list('?prefix=a', noRole);

      expectError(res, 403, 'Forbidden');
    });
  });

  it('when the OpenAPI document is read, then the list\'s prefix parameter is optional with its pattern and lengths', async () => {
    const doc = (await t.http().get('/api/v1/openapi.json')).body as {
      paths: Record<string, { get: { parameters: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[] } }>;
    };

    const prefix = doc.paths[KEYS]!.get.parameters.find((p) => p.name === 'prefix');

    expect(prefix).toMatchObject({ in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z0-9._-]+$' } });
  });
});
