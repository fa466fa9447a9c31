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

  // Each instance keeps the appkeys it last read (AppkeyCache); what another instance changed must
  // still hold on the very next exchange.
  describe('appkeys one instance has cached while the other changes the key', () => {
    const exchange = (server: ServerProcess, appname: string, appkey: string) =>
      call(server, 'POST', '/api/v1/auth/token', { json: { jwt: signRequestToken(appname, appkey) } });
    const rolesIn = (accessToken: unknown) =>
      (JSON.parse(Buffer.from(String(accessToken).split('.')[1]!, 'base64url').toString('utf8')) as { roles: string[] }).roles;
    const createKey = async (appname: string, role: string) => {
      const created = await call(a, 'POST', '/api/v1/api-keys', { token: adminToken, json: { appname, roles: [role] } });
      expect(created.status).toBe(201);
      return created.body.data!.appkey!;
    };

    it('when the key is regenerated elsewhere, then a token signed with the new appkey is accepted at once', async () => {
      const oldAppkey = await createKey('twin-regen', 'viewer');
      expect((await exchange(b, 'twin-regen', oldAppkey)).status).toBe(200);

      const regen = await call(a, 'PUT', '/api/v1/api-keys/twin-regen/regen', { token: adminToken, json: { roles: ['viewer'] } });
      const withNew = await exchange(b, 'twin-regen', regen.body.data!.appkey!);
      const withOld = await exchange(b, 'twin-regen', oldAppkey);

      expect(withNew.status).toBe(200);
      expect(withOld.status).toBe(401);
    });

    it('when the key is regenerated elsewhere with a grace, then both appkeys are accepted during it', async () => {
      const oldAppkey = await createKey('twin-grace', 'viewer');
      expect((await exchange(b, 'twin-grace', oldAppkey)).status).toBe(200);

      const regen = await call(a, 'PUT', '/api/v1/api-keys/twin-grace/regen?grace_seconds=300', { token: adminToken, json: { roles: ['viewer'] } });
      const withOld = await exchange(b, 'twin-grace', oldAppkey);
      const withNew = await exchange(b, 'twin-grace', regen.body.data!.appkey!);

      expect(withOld.status).toBe(200);
      expect(withNew.status).toBe(200);
    });

    it('when the key is deleted and created again under its appname elsewhere, then only the new appkey is accepted', async () => {
      const oldAppkey = await createKey('twin-reborn', 'viewer');
      expect((await exchange(b, 'twin-reborn', oldAppkey)).status).toBe(200);

      expect((await call(a, 'DELETE', '/api/v1/api-keys/twin-reborn', { token: adminToken })).status).toBe(204);
      const withOldWhileGone = await exchange(b, 'twin-reborn', oldAppkey);
      const newAppkey = await createKey('twin-reborn', 'editor');
      const withOld = await exchange(b, 'twin-reborn', oldAppkey);
      const withNew = await exchange(b, 'twin-reborn', newAppkey);

      expect(withOldWhileGone.status).toBe(401);
      expect(withOld.status).toBe(401);
      expect(withNew.status).toBe(200);
      expect(rolesIn(withNew.body.access_token)).toEqual(['editor']);
    });

    it('when the key’s role is changed elsewhere, then the next token carries the new role', async () => {
      const appkey = await createKey('twin-role', 'viewer');
      expect(rolesIn((await exchange(b, 'twin-role', appkey)).body.access_token)).toEqual(['viewer']);

      const updated = await call(a, 'PUT', '/api/v1/api-keys/twin-role', { token: adminToken, json: { roles: ['editor'] } });
      const next = await exchange(b, 'twin-role', appkey);

      expect(updated.status).toBe(200);
      expect(next.status).toBe(200);
      expect(rolesIn(next.body.access_token)).toEqual(['editor']);
    });
  });
});
