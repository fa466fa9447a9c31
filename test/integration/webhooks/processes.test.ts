import { randomBytes } from 'node:crypto';
import { createTestDatabase, onSharedServerOnly, type TestDatabase } from '../../helpers/database';
import { startServerProcess, type ServerProcess } from '../process/server-process';
import { json, send } from '../process/http-client';
import { startReceiver, type Receiver } from './support';

const ADMIN = { username: 'hooks-admin', password: 'webhooks-process-pw-0' };

/** Webhooks sent fast to loopback receivers, with many quick retries. */
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_INSECURE: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 20 }, () => '500ms').join(','),
  BOOTSTRAP_ADMIN_USERNAME: ADMIN.username,
  BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
};

async function call(server: ServerProcess, method: string, path: string, token?: string, body?: unknown) {
  const payload: { headers?: Record<string, string>; body?: string } = body === undefined ? {} : json(body);
  const reply = await send(server.baseUrl, method, path, { ...payload, headers: { ...payload.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  return { status: reply.status, body: reply.text ? (JSON.parse(reply.text) as Record<string, any> /* eslint-disable-line @typescript-eslint/no-explicit-any */) : {} };
}

async function adminToken(server: ServerProcess): Promise<string> {
  const reply = await send(server.baseUrl, 'POST', '/api/auth/bearer/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(ADMIN).toString(),
  });
  return (JSON.parse(reply.text) as { access_token: string }).access_token;
}

async function createKeys(server: ServerProcess, token: string, prefix: string, count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const appname = `${prefix}-${i}`;
    expect((await call(server, 'POST', '/api/v1/api-keys', token, { appname, roles: [] })).status).toBe(201);
    names.push(appname);
  }
  return names;
}

/** The distinct appnames of the api_key.created messages a receiver answered 2xx to. */
const acceptedAppnames = (r: Receiver, accepted: Set<string>) => [...new Set(r.received.filter((g) => accepted.has(String(g.headers['webhook-id']))).map((g) => String(g.json.data.appname)))];

describe('webhooks across processes', () => {
  let receiver: Receiver;
  /** webhook-ids answered 200 by the receiver. */
  const accepted = new Set<string>();
  let down = true;
  const processes: ServerProcess[] = [];
  let database: TestDatabase;
  const masterKey = randomBytes(32).toString('base64');

  beforeAll(async () => {
    receiver = await startReceiver((got) => {
      if (down) return { status: 503 };
      accepted.add(String(got.headers['webhook-id']));
      return { status: 200 };
    });
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const p of processes) await p.kill();
    await receiver?.close();
    await database?.drop();
  });

  const start = async (env: Record<string, string> = {}) => {
    const server = await startServerProcess({ ...WEBHOOK_ENV, MASTER_KEY: masterKey, ...env }, { database });
    processes.push(server);
    return server;
  };

  it('when the service is stopped (SIGTERM) with messages pending and started again, then every message is delivered', async () => {
    const first = await start();
    const token = await adminToken(first);
    const endpoint = await call(first, 'POST', '/api/v1/webhooks', token, { url: receiver.url, events: ['api_key.created'] });
    const names = await createKeys(first, token, 'restart', 5);
    await receiver.waitFor(5);

    const exit = await first.stop();
    down = false;
    const second = await start();
    const deadline = Date.now() + 20_000;
    while (acceptedAppnames(receiver, accepted).length < names.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const secondToken = await adminToken(second);
    const log = await call(second, 'GET', `/api/v1/webhooks/${endpoint.body.data.id}/deliveries`, secondToken);
    await call(second, 'DELETE', `/api/v1/webhooks/${endpoint.body.data.id}`, secondToken);
    await second.stop();

    expect(exit.code).toBe(0);
    expect(acceptedAppnames(receiver, accepted).sort()).toEqual([...names].sort());
    expect(log.body.data).toHaveLength(5);
    expect(log.body.data.every((d: { status: string; attempts: number }) => d.status === 'delivered' && d.attempts >= 2)).toBe(true);
  }, 60_000);

  it('when the service dies (SIGKILL) in the middle of a send, then the message is sent again after its lease, with the same id', async () => {
    down = false;
    let hang = true;
    const held: string[] = [];
    receiver.answer = (got) => {
      if (hang && got.json?.type === 'api_key.created' && String(got.json.data.appname).startsWith('crash')) {
        held.push(String(got.headers['webhook-id']));
        // Answered after the time-out, so long after the process is gone.
        return { delayMs: 5_000 };
      }
      accepted.add(String(got.headers['webhook-id']));
      return { status: 200 };
    };
    const first = await start({ WEBHOOK_TIMEOUT_MS: '3000' });
    const token = await adminToken(first);
    const endpoint = await call(first, 'POST', '/api/v1/webhooks', token, { url: receiver.url, events: ['api_key.created'] });
    const [appname] = await createKeys(first, token, 'crash', 1);
    const deadline = Date.now() + 10_000;
    while (held.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

    await first.kill();
    hang = false;
    const second = await start({ WEBHOOK_TIMEOUT_MS: '3000' });
    const until = Date.now() + 30_000;
    while (!acceptedAppnames(receiver, accepted).includes(appname!) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const log = await call(second, 'GET', `/api/v1/webhooks/${endpoint.body.data.id}/deliveries`, await adminToken(second));
    await second.stop();

    expect(held).toHaveLength(1);
    expect(accepted.has(held[0]!)).toBe(true);
    expect(log.body.data[0]).toMatchObject({ id: held[0], status: 'delivered' });
  }, 60_000);
});

onSharedServerOnly()('two instances on one database', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    // Instances behind one load balancer share one ISSUER (the default differs by port).
    const env = { ...WEBHOOK_ENV, ISSUER: 'http://auth.test' };
    a = await startServerProcess(env);
    b = await startServerProcess(env, { joinDatabaseOf: a });
  }, 60_000);
  afterAll(async () => {
    await b?.cleanup();
    await a?.cleanup();
    await receiver?.close();
  });

  it('when events happen through both instances, then every message is delivered, and none twice', async () => {
    const token = await adminToken(a);
    await call(a, 'POST', '/api/v1/webhooks', token, { url: receiver.url, events: ['api_key.created'] });

    const names = [...(await createKeys(a, token, 'twin-a', 15)), ...(await createKeys(b, token, 'twin-b', 15))];
    await receiver.waitFor(30, 20_000);
    await new Promise((r) => setTimeout(r, 1_500));

    expect(receiver.received.map((g) => String(g.json.data.appname)).sort()).toEqual([...names].sort());
    expect(new Set(receiver.received.map((g) => g.headers['webhook-id'])).size).toBe(30);
  }, 60_000);
});
