import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signRequestToken } from '../../helpers/tokens';
import { startServerProcess, type ServerProcess } from './server-process';

async function post(server: ServerProcess, route: string, body: unknown, token?: string) {
  const res = await fetch(`${server.baseUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { access_token?: string; scope?: string; data?: { appkey: string } } };
}

/** SIGTERM, and the exit code. */
async function stop(server: ServerProcess): Promise<number | null> {
  return (await server.stop()).code;
}

describe('zero configuration: the embedded database in the data folder', () => {
  let dataDir: string;
  const running: ServerProcess[] = [];
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'apikeys-embedded-'));
  });
  afterAll(async () => {
    await Promise.all(running.map((s) => s.cleanup()));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('when the service restarts on the same data folder, then users, keys and appkeys survive', async () => {
    const admin = { username: 'first-admin', password: 'embedded-restart-pw' };
    const env = { BOOTSTRAP_ADMIN_USERNAME: admin.username, BOOTSTRAP_ADMIN_PASSWORD: admin.password };

    const first = await startServerProcess(env, { embeddedDataDir: dataDir, readyWithinMs: 60_000 });
    running.push(first);
    const adminToken = (await post(first, '/api/auth/bearer/token', admin)).body.access_token!;
    const created = await post(first, '/api/v1/api-keys', { appname: 'survivor', roles: ['viewer'] }, adminToken);
    expect(created.status).toBe(201);
    expect(await stop(first)).toBe(0);
    expect((await readdir(dataDir)).sort()).toEqual(['master.key', 'pgdata']);

    const second = await startServerProcess(env, { embeddedDataDir: dataDir, readyWithinMs: 60_000 });
    running.push(second);
    const login = await post(second, '/api/auth/bearer/token', admin);
    const exchange = await post(second, '/api/v1/auth/token', {
      jwt: signRequestToken('survivor', created.body.data!.appkey),
    });

    expect(login.status).toBe(200);
    expect(exchange.status).toBe(200);
    expect(exchange.body.scope).toBe('openid api-keys:read');
    expect(await stop(second)).toBe(0);
  }, 150_000);
});
