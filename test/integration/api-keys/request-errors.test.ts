import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { expectError, expectMissingToken } from '../../helpers/errors';
import { KEYS, keyPath, readKey, regenPath } from './support';

type Method = 'get' | 'post' | 'put' | 'delete' | 'patch';
type Verb = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

const KIB_64 = 64 * 1024;

/** A JSON create body of exactly `bytes` bytes. */
function createBodyOfSize(appname: string, bytes: number): string {
  const skeleton = JSON.stringify({ appname, roles: [], description: '' });
  return JSON.stringify({ appname, roles: [], description: 'x'.repeat(bytes - skeleton.length) });
}

describe('request errors on the key routes', () => {
  let t: TestApp;
  let admin: string;
  let existing: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
    existing = (await createApiKey(t, { role: 'viewer', description: 'untouched' })).appname;
  });
  afterAll(() => t.close());

  /** The six operations, aimed at a key that exists. */
  const operations = (): [string, Method, string][] => [
    ['list', 'get', KEYS],
    ['create', 'post', KEYS],
    ['get', 'get', keyPath(existing)],
    ['update', 'put', keyPath(existing)],
    ['regen', 'put', regenPath(existing)],
    ['delete', 'delete', keyPath(existing)],
  ];
  const call = (name: string) => {
    const [, method, path] = operations().find(([n]) => n === name)!;
    return t.http()[method](path);
  };
  const bodyOps: [string, () => string][] = [
    ['create', () => KEYS],
    ['update', () => keyPath(existing)],
    ['regen', () => regenPath(existing)],
  ];
  const send = (name: string) => {
    const path = bodyOps.find(([n]) => n === name)![1]();
    return name === 'create' ? t.http().post(path) : t.http().put(path);
  };

  // No token, a refused token and too low a role on each key route: test/integration/security/bearer-routes.test.ts.
  describe('the Authorization header (401)', () => {
    it.each(['Bearer', 'Bearer    '])('when the header is %j, naming the scheme but sending no token, then 401 with a bare Bearer challenge', async (header) => {
      const res = await t.http().get(KEYS).set('Authorization', header);

      expectMissingToken(res);
    });

    it('when the Basic scheme is used, then 401 with a Bearer challenge', async () => {
      const res = await t.http().get(KEYS).set('Authorization', `Basic ${Buffer.from('admin:admin').toString('base64')}`);

      expectError(res, 401, 'Unauthorized');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
    });
  });

  describe('authentication comes before everything else', () => {
    it('when no token is sent for a key that does not exist, then 401 rather than 404', async () => {
      const res = await t.http().get(keyPath(randomName('ghost')));

      expectError(res, 401, 'Unauthorized');
    });

    it('when no token is sent with an invalid body, then 401 rather than 400', async () => {
      const res = await t.http().post(KEYS).send({ appname: 'UPPER', roles: ['root'] });

      expectError(res, 401, 'Unauthorized');
    });

    it('when no token is sent with malformed JSON, then 401 rather than 400', async () => {
      const res = await t.http().post(KEYS).set('Content-Type', 'application/json').send('{"appname": ');

      expectError(res, 401, 'Unauthorized');
    });

    it('when no token is sent with a body over 64 KiB, then 401 rather than 413', async () => {
      const res = await t
        .http()
        .post(KEYS)
        .set('Content-Type', 'application/json')
        .send(createBodyOfSize(randomName('big'), KIB_64 + 1));

      expectError(res, 401, 'Unauthorized');
    });

    it('when no token is sent with a text/plain body, then 401 rather than 415', async () => {
      const res = await t.http().put(keyPath(existing)).set('Content-Type', 'text/plain').send('description=x');

      expectError(res, 401, 'Unauthorized');
    });

    it('when no token is sent with a wrong method, then 401 rather than 405', async () => {
      const res = await t.http().patch(keyPath(existing)).send({ description: 'x' });

      expectError(res, 401, 'Unauthorized');
    });
  });

  describe('bodies', () => {
    it.each(bodyOps.map(([n]) => n))('when %s receives malformed JSON, then 400 and the key is unchanged', async (name) => {
      const before = (await readKey(t, existing)).body;

      const res = await send(name).set(bearer(admin)).set('Content-Type', 'application/json').send('{"description": "x",');

      expectError(res, 400, 'BadRequest');
      expect((await readKey(t, existing)).body).toEqual(before);
    });

    it.each([
      ['create', 'text/plain'],
      ['update', 'text/plain'],
      ['regen', 'text/plain'],
      ['create', 'application/x-www-form-urlencoded'],
      ['update', 'application/xml'],
    ])('when %s receives a body of type %s, then 415 UnsupportedMediaType', async (name, type) => {
      const res = await send(name).set(bearer(admin)).set('Content-Type', type).send('roles=viewer');

      expectError(res, 415, 'UnsupportedMediaType');
      expect((await readKey(t, existing)).body.data.description).toBe('untouched');
    });

    it('when the JSON content type carries a charset, then the body is accepted', async () => {
      const appname = randomName('charset');

      const res = await t
        .http()
        .post(KEYS)
        .set(bearer(admin))
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ appname, roles: [] }));

      expect(res.status).toBe(201);
    });

    it.each(bodyOps.map(([n]) => n))('when %s receives a body over 64 KiB, then 413 PayloadTooLarge', async (name) => {
      const res = await send(name)
        .set(bearer(admin))
        .set('Content-Type', 'application/json')
        .send(createBodyOfSize(randomName('big'), KIB_64 + 1));

      expectError(res, 413, 'PayloadTooLarge');
    });

    describe('on the operations that take no body (list, get, delete)', () => {
      const withBody = (name: string) => call(name).set(bearer(admin));

      it.each([
        ['list', 'text/plain', 415, 'not json'],
        ['get', 'application/xml', 415, '<a/>'],
        ['delete', 'text/plain', 415, 'not json'],
        ['list', 'malformed application/json', 400, '{bad'],
        ['delete', 'malformed application/json', 400, '{bad'],
        ['delete', 'over-64-KiB application/json', 413, JSON.stringify({ pad: 'x'.repeat(KIB_64) })],
      ])('when %s is sent a %s body, then %i as on any route, and the key is not deleted', async (name, kind, status, body) => {
        const type = kind.split(' ').at(-1)!;
        const res = await withBody(name).set('Content-Type', type).send(body);

        expectError(res, status, ({ 400: 'BadRequest', 413: 'PayloadTooLarge', 415: 'UnsupportedMediaType' } as const)[status]!);
        expect((await readKey(t, existing)).body.data.description).toBe('untouched');
      });

      it('when get is sent a well-formed JSON body, then 200: it has nothing to read from it', async () => {
        const res = await withBody('get').set('Content-Type', 'application/json').send('{}');

        expect(res.status).toBe(200);
        expect(res.body.data.appname).toBe(existing);
      });
    });

    it('when a body is exactly 64 KiB, then it is parsed (400 for the long description, not 413)', async () => {
      const res = await t
        .http()
        .post(KEYS)
        .set(bearer(admin))
        .set('Content-Type', 'application/json')
        .send(createBodyOfSize(randomName('edge'), KIB_64));

      expectError(res, 400, 'BadRequest', 'description');
    });
  });

  describe('a NUL in a string parameter (Hardening: bad input stays 400)', () => {
    it.each<[string, Method, () => string, Record<string, string>, string]>([
      ['list: limit', 'get', () => KEYS, { limit: '5\u0000' }, 'query.limit:'],
      ['list: after', 'get', () => KEYS, { after: 'a\u0000b' }, 'query.after:'],
      ['regen: grace_seconds', 'put', () => regenPath(existing), { grace_seconds: '60\u0000' }, 'query.grace_seconds:'],
    ])('when the query of %s holds NUL, then 400 naming the field', async (_case, method, path, query, named) => {
      const res = await t.http()[method](path()).query(query).set(bearer(admin)).send(method === 'put' ? { roles: ['viewer'] } : undefined);

      expectError(res, 400, 'BadRequest', named);
    });

    it.each<[string, Method, string]>([
      ['get', 'get', `${KEYS}/app%00name`],
      ['update', 'put', `${KEYS}/app%00name`],
      ['regen', 'put', `${KEYS}/app%00name/regen`],
      ['delete', 'delete', `${KEYS}/app%00name`],
    ])('when the appname in the path of %s holds NUL, then 400 naming appname', async (_case, method, path) => {
      const res = await t.http()[method](path).set(bearer(admin)).send(method === 'put' ? { roles: ['viewer'] } : undefined);

      expectError(res, 400, 'BadRequest', 'params.appname:');
    });
  });

  describe('methods', () => {
    it.each<[Verb, string, string]>([
      ['DELETE', '/api/v1/api-keys', 'GET, POST'],
      ['PUT', '/api/v1/api-keys', 'GET, POST'],
      ['PATCH', '/api/v1/api-keys/{appname}', 'GET, PUT, DELETE'],
      ['POST', '/api/v1/api-keys/{appname}', 'GET, PUT, DELETE'],
      ['GET', '/api/v1/api-keys/{appname}/regen', 'PUT'],
      ['POST', '/api/v1/api-keys/{appname}/regen', 'PUT'],
    ])('when %s %s is called, then 405 MethodNotAllowed with Allow: %s', async (method, path, allow) => {
      const verb = method.toLowerCase() as Method;

      const res = await t.http()[verb](path.replace('{appname}', existing)).set(bearer(admin));

      expectError(res, 405, 'MethodNotAllowed');
      expect(res.headers.allow).toBe(allow);
    });
  });
});
