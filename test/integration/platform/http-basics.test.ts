import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import request from 'supertest';
import { buildApp } from '../../../src/app';
import { NO_RATE_LIMITS } from '../../../src/http/rate-limits';
import { loadConfig } from '../../../src/config';
import { Database } from '../../../src/db/database';
import { createLogger } from '../../../src/logger';
import { createServices } from '../../../src/services';
import { startTestApp, type TestApp } from '../../helpers/app';
import { expectError } from '../../helpers/errors';
import { bearer, createUser, tokenForRole } from '../../helpers/factories';
import { parseLogLines, requestLines } from './log-lines';

/** Text that must never reach a client: stack frames, SQL, driver and file details. */
function expectNoInternals(text: string, extra: string[] = []): void {
  expect(text).not.toMatch(/\bat .+\(.+:\d+:\d+\)|\bat \/|node_modules|\.ts:\d+/);
  expect(text).not.toMatch(/\b(SELECT|INSERT|UPDATE|DELETE FROM)\b/);
  for (const fragment of extra) expect(text).not.toContain(fragment);
}

describe('HTTP basics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  describe('health', () => {
    it('when /healthz is requested without a token, then 200', async () => {
      const res = await t.http().get('/healthz');

      expect(res.status).toBe(200);
    });

    it('when /readyz is requested without a token and the database is up, then 200', async () => {
      const res = await t.http().get('/readyz');

      expect(res.status).toBe(200);
    });
  });

  describe('unknown routes and methods', () => {
    it.each([
      ['GET', '/no-such-route'],
      ['GET', '/api/v1/nothing-here'],
      ['POST', '/api/v2/api-keys'],
      ['DELETE', '/api/auth/bearer'],
    ])('when %s %s is requested, then 404 with exactly {status, name, message}', async (method, path) => {
      const res = await t.http()[method.toLowerCase() as 'get' | 'post' | 'delete'](path);

      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expectError(res, 404, 'NotFound');
    });

    it.each([
      ['GET', '/api/v1/auth/token', 'POST'],
      ['PUT', '/api/auth/bearer/token', 'POST'],
      ['GET', '/api/auth/bearer/refresh', 'POST'],
      ['POST', '/.well-known/jwks.json', 'GET'],
    ])('when %s %s is requested, then 405 MethodNotAllowed with an Allow header', async (method, path, allowed) => {
      const res = await t.http()[method.toLowerCase() as 'get' | 'put' | 'post'](path);

      expectError(res, 405, 'MethodNotAllowed');
      expect(res.headers.allow).toContain(allowed);
    });

    it.each([
      ['POST', '/healthz'],
      ['DELETE', '/readyz'],
    ])('when %s %s is requested, then 405 MethodNotAllowed rather than 404', async (method, path) => {
      const res = await t.http()[method.toLowerCase() as 'post' | 'delete'](path);

      expectError(res, 405, 'MethodNotAllowed');
    });

    it.each([
      ['PATCH', '/api/v1/api-keys', 'GET, POST'],
      ['PATCH', '/api/v1/api-keys/some-app', 'GET, PUT, DELETE'],
      ['GET', '/api/v1/api-keys/some-app/regen', 'PUT'],
    ])('when an authenticated caller sends %s %s, then 405 MethodNotAllowed', async (method, path, allowed) => {
      const token = await tokenForRole(t, 'admin');

      const res = await t.http()[method.toLowerCase() as 'patch' | 'get'](path).set(bearer(token));

      expectError(res, 405, 'MethodNotAllowed');
      for (const m of allowed.split(', ')) expect(res.headers.allow).toContain(m);
    });
  });

  describe('request id', () => {
    it('when X-Request-Id is sent, then the same id is echoed and logged with the request line', async () => {
      const id = `req-${randomBytes(6).toString('hex')}`;

      const res = await t.http().get('/healthz').set('X-Request-Id', id);

      expect(res.headers['x-request-id']).toBe(id);
      expect(requestLines(t.logs())).toContainEqual(expect.objectContaining({ id, method: 'GET', path: '/healthz', status: 200 }));
    });

    it('when no X-Request-Id is sent, then a fresh one is generated for each response', async () => {
      const first = await t.http().get('/healthz');
      const second = await t.http().get('/no-such-route');

      expect(first.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
      expect(second.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
      expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
    });

    it('when the sent X-Request-Id is malformed (spaces, quotes, overlong), then it is replaced by a generated one', async () => {
      const bad = ['has spaces', 'a"quote', 'x'.repeat(500)];

      for (const id of bad) {
        const res = await t.http().get('/healthz').set('X-Request-Id', id);

        expect(res.headers['x-request-id']).toBeDefined();
        expect(res.headers['x-request-id']).not.toBe(id);
      }
    });
  });

  describe('security headers', () => {
    it.each(['/healthz', '/no-such-route', '/.well-known/jwks.json'])(
      'when %s is requested, then helmet headers are present and X-Powered-By is absent',
      async (path) => {
        const res = await t.http().get(path);

        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['x-frame-options']).toBe('DENY');
        expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
        expect(res.headers['strict-transport-security']).toBeDefined();
        expect(res.headers['x-powered-by']).toBeUndefined();
      },
    );

    it('when anything is answered, then only the headers that matter to a JSON API are set, not those for HTML pages', async () => {
      const res = await t.http().get('/healthz');

      for (const pageOnly of ['cross-origin-opener-policy', 'origin-agent-cluster', 'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection']) {
        expect(res.headers[pageOnly]).toBeUndefined();
      }
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    });

    it('when an error is answered, then X-Powered-By is absent too', async () => {
      const res = await t.http().post('/api/auth/bearer/token').type('form').send({ username: 'nobody-here', password: 'x'.repeat(12) });

      expect(res.status).toBe(401);
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    });
  });

  // Node answers these itself, before any middleware runs; they must still carry the error body.
  describe('requests refused before the app sees them', () => {
    /** Sends raw bytes and reads the whole answer until the server closes the connection. */
    async function rawExchange(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
      const { port } = new URL(t.baseUrl);
      const socket = connect(Number(port), '127.0.0.1');
      socket.end(bytes);
      let answer = '';
      for await (const chunk of socket) answer += (chunk as Buffer).toString('latin1');
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      const [statusLine = '', ...fields] = head.split('\r\n');
      const headers = Object.fromEntries(fields.map((field) => [field.slice(0, field.indexOf(':')).toLowerCase(), field.slice(field.indexOf(':') + 1).trim()]));
      return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) as unknown };
    }

    it.each([
      ['headers over Node’s 16 KiB limit (a huge bearer token)', `GET /api/v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`],
      ['a malformed request line', 'NOT AN HTTP REQUEST\r\n\r\n'],
      ['a malformed header', 'GET /healthz HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'],
    ])('when a request has %s, then 400 with the error body, and the connection is closed', async (_case, bytes) => {
      const res = await rawExchange(bytes);

      expectError(res, 400, 'BadRequest');
    });
  });

  describe('500s reveal nothing', () => {
    it('when the database answers a query with an SQL error, then 500 InternalServerError without stack, SQL or driver message', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const sqlError = (await t.db
        .query('SELECT secret_column FROM table_that_does_not_exist')
        .catch((err: unknown) => err)) as Error;
      jest.spyOn(t.db, 'queryPrepared').mockRejectedValueOnce(sqlError);

      const res = await t.http().post('/api/auth/bearer/token').type('form').send(user);

      expectError(res, 500, 'InternalServerError');
      expectNoInternals(res.text, ['table_that_does_not_exist', 'secret_column', 'does not exist', '42P01', sqlError.message]);
    });

    it('when a handler throws an unexpected error, then 500 without its message, and the cause is logged at error level with the request id', async () => {
      const marker = `boom-${randomBytes(4).toString('hex')}`;
      jest.spyOn(t.services.signingKeys, 'jwkSet').mockRejectedValueOnce(new Error(`${marker} in /srv/app/src/x.ts:12:3`));

      const res = await t.http().get('/.well-known/jwks.json');

      expectError(res, 500, 'InternalServerError');
      expectNoInternals(res.text, [marker]);
      const logged = parseLogLines(t.logs()).filter((l) => JSON.stringify(l).includes(marker));
      expect(logged.some((l) => Number(l.level) >= 50)).toBe(true);
      expect(logged).toContainEqual(expect.objectContaining({ msg: 'request failed', req: expect.objectContaining({ id: res.headers['x-request-id'] }) }));
    });
  });
});

describe('HTTP basics: database outages', () => {
  describe('a database that fails mid-request', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(() => t.close());
    afterEach(() => jest.restoreAllMocks());

    // The driver error is built here rather than caught from a refused socket: under Jest, errors
    // raised by Node's own net module come from another realm and fail `instanceof Error`.
    const outages = [
      ['connection refused', () => Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED', syscall: 'connect' })],
      ['server shutting down (57P01)', () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' })],
      ['connection lost', () => new Error('Connection terminated unexpectedly')],
      [
        'the database closed to connections (55000)',
        () => Object.assign(new Error('database "keys" is not currently accepting connections'), { code: '55000', severity: 'FATAL' }),
      ],
    ] as const;

    it.each(outages)('when the database fails with %s during a password login, then 503 ServiceUnavailable without the driver message', async (_what, make) => {
      const user = await createUser(t, { role: 'viewer' });
      const failure = make();
      jest.spyOn(t.db, 'queryPrepared').mockRejectedValueOnce(failure);

      const res = await t.http().post('/api/auth/bearer/token').type('form').send(user);

      expectError(res, 503, 'ServiceUnavailable');
      expectNoInternals(res.text, [failure.message, '10.0.0.5', '57P01']);
    });

    it('when the database fails once and then returns, then the next login succeeds without a restart', async () => {
      const user = await createUser(t, { role: 'viewer' });
      jest.spyOn(t.db, 'queryPrepared').mockRejectedValueOnce(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));

      const during = await t.http().post('/api/auth/bearer/token').type('form').send(user);
      const after = await t.http().post('/api/auth/bearer/token').type('form').send(user);

      expect(during.status).toBe(503);
      expect(after.status).toBe(200);
    });
  });

  it('when the pool is closed, then /readyz answers 503 ServiceUnavailable and /healthz still 200', async () => {
    const t2 = await startTestApp();
    await t2.db.close();
    // close() would end the pool a second time; the schema must still be dropped.
    jest.spyOn(t2.db, 'close').mockResolvedValue(undefined);
    try {
      const ready = await t2.http().get('/readyz');
      const live = await t2.http().get('/healthz');

      expectError(ready, 503, 'ServiceUnavailable');
      expectNoInternals(ready.text, ['pool']);
      expect(live.status).toBe(200);
    } finally {
      await t2.close();
    }
  });

  describe('a database server that cannot be reached', () => {
    const logger = createLogger('silent');
    const config = loadConfig({
      NODE_ENV: 'test',
      BCRYPT_COST: '4',
      ISSUER: 'http://issuer.test',
      MASTER_KEY: randomBytes(32).toString('base64'),
    });
    // Nothing listens on port 1: every connection is refused, as in an outage.
    const db = new Database({ url: 'postgres://postgres@127.0.0.1:1/test', connectionTimeoutMs: 2_000 }, logger);
    const app = buildApp({ config, logger, services: createServices(config, db, config.masterKey!), rateLimits: NO_RATE_LIMITS });
    afterAll(() => db.close());

    it('when the database server refuses connections, then /readyz answers 503 ServiceUnavailable', async () => {
      const res = await request(app).get('/readyz');

      expectError(res, 503, 'ServiceUnavailable');
    });
  });
});
