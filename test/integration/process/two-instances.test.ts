import { signRequestToken } from '../../helpers/tokens';
import { startServerProcess, type ServerProcess } from './server-process';
import { form, json, send } from './http-client';
import { onSharedServerOnly } from '../../helpers/database';

interface Reply {
  status: number;
  body: Record<string, unknown> & { data?: Record<string, string> };
}

async function call(
  server: ServerProcess,
  method: string,
  route: string,
  options: { token?: string; json?: unknown; form?: Record<string, string> } = {},
): Promise<Reply> {
  const payload: { headers?: Record<string, string>; body?: string } =
    options.form ? form(options.form) : options.json !== undefined ? json(options.json) : {};
  const reply = await send(server.baseUrl, method, route, {
    ...payload,
    headers: { ...payload.headers, ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
  });
  return { status: reply.status, body: reply.text ? JSON.parse(reply.text) : {} };
}

onSharedServerOnly()('two service processes on one database', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let adminToken: string;
  const admin = { username: 'twin-admin', password: 'two-instances-pw' };

  beforeAll(async () => {
    // Instances behind one load balancer share one ISSUER (the default differs by port).
    const env = { ISSUER: 'http://auth.test', BOOTSTRAP_ADMIN_USERNAME: admin.username, BOOTSTRAP_ADMIN_PASSWORD: admin.password };
    a = await startServerProcess(env);
    b = await startServerProcess(env, { joinDatabaseOf: a });
    adminToken = (await call(a, 'POST', '/api/auth/bearer/token', { form: admin })).body.access_token as string;
  }, 60_000);
  afterAll(async () => {
    await b?.cleanup();
    await a?.cleanup();
  });

  it('when a token is issued by one instance, then the other accepts it', async () => {
    const res = await call(b, 'GET', '/api/v1/api-keys', { token: adminToken });

    expect(res.status).toBe(200);
  });

  it('when a refresh token used on one instance is replayed on the other, then it is reuse: 401 and the session is revoked', async () => {
    const login = await call(a, 'POST', '/api/auth/bearer/token', { form: admin });
    const first = await call(a, 'POST', '/api/auth/bearer/refresh', { form: { refresh_token: login.body.refresh_token as string } });

    const replay = await call(b, 'POST', '/api/auth/bearer/refresh', { form: { refresh_token: login.body.refresh_token as string } });
    const newest = await call(a, 'POST', '/api/auth/bearer/refresh', { form: { refresh_token: first.body.refresh_token as string } });
    const sessionAccess = await call(b, 'GET', '/api/v1/api-keys', { token: first.body.access_token as string });

    expect(first.status).toBe(200);
    expect(replay.status).toBe(401);
    expect(newest.status).toBe(401);
    expect(sessionAccess.status).toBe(401);
  });

  it('when 20 refreshes of one token are spread over both instances at once, then exactly one succeeds', async () => {
    const login = await call(b, 'POST', '/api/auth/bearer/token', { form: admin });
    const form = { refresh_token: login.body.refresh_token as string };

    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 ? a : b, 'POST', '/api/auth/bearer/refresh', { form })));

    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 401)).toHaveLength(19);
  });

  it('when a key is regenerated through one instance, then the other refuses its old token on the very next call', async () => {
    const created = await call(a, 'POST', '/api/v1/api-keys', { token: adminToken, json: { appname: 'twin-key', roles: ['viewer'] } });
    const exchanged = await call(b, 'POST', '/api/v1/auth/token', { json: { jwt: signRequestToken('twin-key', created.body.data!.appkey!) } });
    const keyToken = exchanged.body.access_token as string;
    expect((await call(b, 'GET', '/api/v1/api-keys/twin-key', { token: keyToken })).status).toBe(200);

    const regen = await call(a, 'PUT', '/api/v1/api-keys/twin-key/regen', { token: adminToken, json: { roles: ['viewer'] } });
    const next = await call(b, 'GET', '/api/v1/api-keys/twin-key', { token: keyToken });
    const oldAppkey = await call(b, 'POST', '/api/v1/auth/token', { json: { jwt: signRequestToken('twin-key', created.body.data!.appkey!) } });

    expect(regen.status).toBe(200);
    expect(next.status).toBe(401);
    expect(oldAppkey.status).toBe(401);
  });
});
