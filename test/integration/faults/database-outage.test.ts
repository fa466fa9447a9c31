import { createHash } from 'node:crypto';
import { SecretBox } from '../../../src/crypto/secretbox';
import { Database } from '../../../src/db/database';
import { createLogger } from '../../../src/logger';
import type { TestDatabase } from '../../helpers/database';
import { expectError } from '../../helpers/errors';
import { startServerProcess, type ServerProcess } from '../process/server-process';
import { proxiedTestDatabase, type TcpProxy } from './tcp-proxy';
import { form, json, send } from '../process/http-client';

const admin = { username: 'outage-admin', password: 'outage-admin-pw' };

async function call(server: ServerProcess, method: string, route: string, token?: string, body?: unknown) {
  const payload: { headers?: Record<string, string>; body?: string } = body === undefined ? {} : json(body);
  const reply = await send(server.baseUrl, method, route, {
    ...payload,
    headers: { ...payload.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  return { status: reply.status, headers: reply.headers, body: reply.text ? JSON.parse(reply.text) : undefined };
}

const login = (server: ServerProcess) =>
  send(server.baseUrl, 'POST', '/api/auth/bearer/token', form(admin)).then((r) => ({
    status: r.status,
    headers: r.headers,
    body: JSON.parse(r.text) as { access_token: string },
  }));

async function waitUntilReady(server: ServerProcess, withinMs: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < withinMs) {
    if ((await call(server, 'GET', '/readyz')).status === 200) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not ready again within ${withinMs} ms`);
}

describe('database outages', () => {
  let proxy: TcpProxy;
  let server: ServerProcess;
  let adminToken: string;
  let database: TestDatabase;

  beforeAll(async () => {
    ({ proxy, database } = await proxiedTestDatabase());
    server = await startServerProcess(
      {
        DATABASE_CONNECT_TIMEOUT: '1',
        DATABASE_STATEMENT_TIMEOUT: '2',
        BOOTSTRAP_ADMIN_USERNAME: admin.username,
        BOOTSTRAP_ADMIN_PASSWORD: admin.password,
      },
      { database },
    );
    adminToken = (await login(server)).body.access_token;
  }, 60_000);
  afterAll(async () => {
    proxy.setMode('forward');
    await server.cleanup();
    await database.drop();
  });
  afterEach(() => proxy.setMode('forward'));

  it('when the database refuses connections, then every route that needs it answers 503 quickly, and the service recovers by itself', async () => {
    proxy.setMode('refuse');
    const started = Date.now();
    const [list, token, ready, health] = await Promise.all([
      call(server, 'GET', '/api/v1/api-keys', adminToken),
      login(server),
      call(server, 'GET', '/readyz'),
      call(server, 'GET', '/healthz'),
    ]);
    const elapsed = Date.now() - started;

    expectError(list, 503, 'ServiceUnavailable');
    expectError(token, 503, 'ServiceUnavailable');
    expectError(ready, 503, 'ServiceUnavailable');
    expect(health.status).toBe(200);
    expect(elapsed).toBeLessThan(3_000);

    proxy.setMode('forward');
    await waitUntilReady(server, 10_000);
    expect((await call(server, 'GET', '/api/v1/api-keys', adminToken)).status).toBe(200);
    expect(server.running()).toBe(true);
  }, 30_000);

  it('when the network to the database goes silent, then requests answer 503 within the time-outs, and recover', async () => {
    proxy.setMode('blackhole');
    const started = Date.now();
    const list = await call(server, 'GET', '/api/v1/api-keys', adminToken);
    const elapsed = Date.now() - started;

    expectError(list, 503, 'ServiceUnavailable');
    // connect time-out 1 s, or statement time-out 2 s plus the client-side margin on a pooled connection
    expect(elapsed).toBeLessThan(6_000);

    proxy.setMode('forward');
    await waitUntilReady(server, 15_000);
    expect((await call(server, 'GET', '/api/v1/api-keys', adminToken)).status).toBe(200);
    expect(server.running()).toBe(true);
  }, 40_000);

  it('when the database is cut during a burst of regenerations, then no key is left half-regenerated', async () => {
    const names = ['outage-a', 'outage-b', 'outage-c'];
    for (const appname of names) {
      expect((await call(server, 'POST', '/api/v1/api-keys', adminToken, { appname, roles: ['viewer'] })).status).toBe(201);
    }

    const burst = Array.from({ length: 30 }, (_, i) =>
      call(server, 'PUT', `/api/v1/api-keys/${names[i % 3]}/regen`, adminToken, { description: `round ${i}`, roles: ['viewer'] }),
    );
    setTimeout(() => proxy.setMode('refuse'), 20);
    const statuses = (await Promise.all(burst).catch((err: Error) => {
      throw new Error(`${err.message}; server output:\n${server.output()}`);
    })).map((r) => r.status);
    proxy.setMode('forward');
    await waitUntilReady(server, 10_000);

    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    // Each stored appkey must still match its digest: digest and ciphertext were written together.
    const db = new Database({ url: database.url, poolSize: 1 }, createLogger('silent'));
    try {
      const masterKey = Buffer.from(server.database.MASTER_KEY!, 'base64');
      const { rows } = await db.query('SELECT appname, key_digest, key_ciphertext FROM api_keys WHERE appname = ANY($1)', [names]);
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        const appkey = new SecretBox(masterKey).open(row.key_ciphertext, row.appname);
        expect(createHash('sha256').update(appkey).digest().equals(row.key_digest)).toBe(true);
      }
    } finally {
      await db.close();
    }
  }, 40_000);
});
