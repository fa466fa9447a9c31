import { createHash, createPrivateKey, randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { SecretBox } from '../../../src/crypto/secretbox';
import type { TokenResponse } from '../../../src/tokens/tokens.responses';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createUser, randomName, type TestUser } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { dumpCurrentSchema, type TableDump } from './db-dump';
import { requestLines } from './log-lines';

interface Secret {
  label: string;
  value: string;
}

interface Exchange {
  method: string;
  path: string;
  status: number;
}

/** The forms in which a stored or logged secret would still be readable. */
function renderingsOf(secret: Secret): string[] {
  const forms = [secret.value, Buffer.from(secret.value).toString('base64'), Buffer.from(secret.value).toString('hex')];
  if (secret.value.startsWith('ak_')) forms.push(secret.value.slice(3, 3 + 43)); // the random part alone
  return forms;
}

function findLeaks(secrets: Secret[], haystacks: { where: string; text: string }[]): string[] {
  const leaks: string[] = [];
  for (const secret of secrets) {
    for (const form of renderingsOf(secret)) {
      for (const { where, text } of haystacks) if (text.includes(form)) leaks.push(`${secret.label} in ${where}`);
    }
  }
  return leaks;
}

describe('secrets hygiene: database and logs after a realistic flow', () => {
  let t: TestApp;
  const secrets: Secret[] = [];
  const exchanges: Exchange[] = [];
  let dump: TableDump[];
  let logs: string;
  let currentAppkey: { appname: string; appkey: string };
  let oldAppkey: string;
  let admin: TestUser;

  const keep = (label: string, value: string) => secrets.push({ label, value });
  const keepTokens = (label: string, tokens: TokenResponse) => {
    keep(`${label} access token`, tokens.access_token);
    keep(`${label} refresh token`, tokens.refresh_token);
    keep(`${label} id token`, tokens.id_token);
  };
  /** Records the exchange for the request-line check, and insists on the expected status. */
  function expectExchange(res: Response, method: string, path: string, status: number): Response {
    if (res.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    exchanges.push({ method, path, status });
    return res;
  }

  async function passwordLogin(user: TestUser, as: 'form' | 'json', status = 200): Promise<Response> {
    const req = t.http().post('/api/auth/bearer/token');
    const res = await (as === 'form' ? req.type('form') : req).send({ username: user.username, password: user.password });
    return expectExchange(res, 'POST', '/api/auth/bearer/token', status);
  }

  async function keyLogin(appname: string, appkey: string, as: 'form' | 'json', status = 200, jwt?: string): Promise<Response> {
    const requestToken = jwt ?? signRequestToken(appname, appkey);
    keep(`request token of ${appname}`, requestToken);
    const req = t.http().post('/api/v1/auth/token');
    const res = await (as === 'form' ? req.type('form') : req).send({ jwt: requestToken });
    return expectExchange(res, 'POST', '/api/v1/auth/token', status);
  }

  async function refresh(refreshToken: string, status = 200): Promise<Response> {
    const res = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: refreshToken });
    return expectExchange(res, 'POST', '/api/auth/bearer/refresh', status);
  }

  beforeAll(async () => {
    t = await startTestApp();

    // Users and password logins (form and JSON), plus a failed attempt with a wrong password.
    admin = await createUser(t, { role: 'admin' });
    const editor = await createUser(t, { role: 'editor' });
    keep('admin password', admin.password);
    keep('editor password', editor.password);
    const adminTokens = (await passwordLogin(admin, 'form')).body as TokenResponse;
    const editorTokens = (await passwordLogin(editor, 'json')).body as TokenResponse;
    keepTokens('admin', adminTokens);
    keepTokens('editor', editorTokens);
    const wrongPassword = `wrong-${randomBytes(8).toString('hex')}`;
    keep('wrong password', wrongPassword);
    await passwordLogin({ username: admin.username, password: wrongPassword }, 'form', 401);

    // Keys created by an admin and an editor.
    const viewerApp = randomName('app');
    const created = expectExchange(
      await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(adminTokens.access_token))
        .send({ appname: viewerApp, description: 'viewer key', roles: ['viewer'] }),
      'POST',
      '/api/v1/api-keys',
      201,
    );
    const viewerKey = created.body.data.appkey as string;
    keep('viewer appkey (before regen)', viewerKey);
    const editorApp = randomName('app');
    const editorKey = expectExchange(
      await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(editorTokens.access_token))
        .send({ appname: editorApp, roles: ['editor'] }),
      'POST',
      '/api/v1/api-keys',
      201,
    ).body.data.appkey as string;
    keep('editor appkey', editorKey);

    // Request-token exchanges (JSON and form), and a replay that must be refused.
    const replayed = signRequestToken(viewerApp, viewerKey);
    const viewerTokens = (await keyLogin(viewerApp, viewerKey, 'json', 200, replayed)).body as TokenResponse;
    keepTokens('viewer key', viewerTokens);
    await keyLogin(viewerApp, viewerKey, 'json', 401, replayed);
    keepTokens('editor key', (await keyLogin(editorApp, editorKey, 'form')).body as TokenResponse);

    // Bearer use, including a client that wrongly puts its token in the query string.
    expectExchange(await t.http().get('/api/v1/api-keys').set(bearer(viewerTokens.access_token)), 'GET', '/api/v1/api-keys', 200);
    expectExchange(
      await t.http().get(`/api/v1/api-keys/${viewerApp}`).set(bearer(viewerTokens.access_token)),
      'GET',
      `/api/v1/api-keys/${viewerApp}`,
      200,
    );
    expectExchange(
      await t.http().get(`/api/v1/api-keys?access_token=${viewerTokens.access_token}`),
      'GET',
      '/api/v1/api-keys',
      401,
    );

    // A client that sends its appkey in an update body gets a 400 that must not echo or log it.
    expectExchange(
      await t
        .http()
        .put(`/api/v1/api-keys/${viewerApp}`)
        .set(bearer(adminTokens.access_token))
        .send({ description: 'x', roles: ['viewer'], appkey: viewerKey }),
      'PUT',
      `/api/v1/api-keys/${viewerApp}`,
      400,
    );

    // Refresh (user and key sessions), then a reuse of a spent refresh token.
    const refreshedViewer = (await refresh(viewerTokens.refresh_token)).body as TokenResponse;
    keepTokens('viewer key (refreshed)', refreshedViewer);
    const refreshedEditor = (await refresh(editorTokens.refresh_token)).body as TokenResponse;
    keepTokens('editor (refreshed)', refreshedEditor);
    await refresh(editorTokens.refresh_token, 401);

    // Regen: a new appkey works, the old one and its tokens no longer do.
    const regen = expectExchange(
      await t
        .http()
        .put(`/api/v1/api-keys/${viewerApp}/regen`)
        .set(bearer(adminTokens.access_token))
        .send({ description: 'viewer key', roles: ['viewer'] }),
      'PUT',
      `/api/v1/api-keys/${viewerApp}/regen`,
      200,
    );
    const newKey = regen.body.data.appkey as string;
    keep('viewer appkey (after regen)', newKey);
    keepTokens('viewer key (after regen)', (await keyLogin(viewerApp, newKey, 'json')).body as TokenResponse);
    await keyLogin(viewerApp, viewerKey, 'json', 401);
    expectExchange(
      await t.http().get('/api/v1/api-keys').set(bearer(refreshedViewer.access_token)),
      'GET',
      '/api/v1/api-keys',
      401,
    );
    await refresh(refreshedViewer.refresh_token, 401);

    currentAppkey = { appname: viewerApp, appkey: newKey };
    oldAppkey = viewerKey;

    // The private signing key, as the service holds it, must not be stored or logged in the clear either.
    const { rows } = await t.db.query<{ kid: string; private_key_ciphertext: Buffer }>(
      'SELECT kid, private_key_ciphertext FROM signing_keys',
    );
    for (const row of rows) {
      const der = new SecretBox(t.masterKey).open(row.private_key_ciphertext, row.kid);
      const jwk = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
      keep(`private signing key ${row.kid} (d)`, String(jwk.d));
      keep(`private signing key ${row.kid} (DER)`, der.toString('base64'));
    }

    dump = await dumpCurrentSchema(t.db);
    logs = t.logs();
  });
  afterAll(() => t.close());

  it('when the flow has run, then every table of the schema was dumped and the flow left rows to inspect', () => {
    const byTable = Object.fromEntries(dump.map((d) => [d.table, d.rows]));

    expect(Object.keys(byTable)).toEqual(
      expect.arrayContaining(['api_keys', 'request_token_jtis', 'schema_migrations', 'sessions', 'signing_keys', 'users']),
    );
    for (const table of ['api_keys', 'request_token_jtis', 'sessions', 'signing_keys', 'users']) {
      expect(byTable[table]).toBeGreaterThan(0);
    }
    expect(secrets.length).toBeGreaterThan(30);
  });

  it('when the dump is searched for values that are stored (appname, username, appkey digest), then the scan finds them', () => {
    const digestHex = createHash('sha256').update(currentAppkey.appkey).digest('hex');
    const haystacks = dump.map((d) => ({ where: d.table, text: d.text }));

    // A control for the scan below: the same search must see what really is in the rows.
    expect(findLeaks([{ label: 'appname', value: currentAppkey.appname }], haystacks)).not.toEqual([]);
    expect(findLeaks([{ label: 'username', value: admin.username }], haystacks)).not.toEqual([]);
    expect(haystacks.some((h) => h.text.includes(digestHex))).toBe(true);
  });

  it('when every row of every table is read as text, then no appkey, password, token or private key appears in the clear', () => {
    const leaks = findLeaks(
      secrets,
      dump.map((d) => ({ where: `table ${d.table}`, text: d.text })),
    );

    expect(leaks).toEqual([]);
  });

  it('when the captured logs are searched, then no appkey, password, token or private key appears', () => {
    const leaks = findLeaks(secrets, [{ where: 'logs', text: logs }]);

    expect(leaks).toEqual([]);
  });

  it('when the captured logs are read, then each request has its line with method, path and status', () => {
    const lines = requestLines(logs).map(({ method, path, status }) => ({ method, path, status }));

    for (const exchange of exchanges) expect(lines).toContainEqual(exchange);
    expect(exchanges.length).toBeGreaterThan(15);
  });

  it('when an api_keys row is read, then it holds the appkey only as its SHA-256 digest and an AES-GCM box under MASTER_KEY', async () => {
    const { rows } = await t.db.query<{ key_digest: Buffer; key_ciphertext: Buffer }>(
      'SELECT key_digest, key_ciphertext FROM api_keys WHERE appname = $1',
      [currentAppkey.appname],
    );
    const row = rows[0]!;

    expect(row.key_digest.equals(createHash('sha256').update(currentAppkey.appkey).digest())).toBe(true);
    expect(row.key_ciphertext.includes(Buffer.from(currentAppkey.appkey))).toBe(false);
    expect(new SecretBox(t.masterKey).open(row.key_ciphertext, currentAppkey.appname).toString('utf8')).toBe(currentAppkey.appkey);
    expect(() => new SecretBox(randomBytes(32)).open(row.key_ciphertext, currentAppkey.appname)).toThrow();
  });

  it('when a key has been regenerated, then no row holds the digest of its old appkey any more', async () => {
    const { rows } = await t.db.query('SELECT 1 FROM api_keys WHERE key_digest = $1', [
      createHash('sha256').update(oldAppkey).digest(),
    ]);

    expect(rows).toHaveLength(0);
  });

  it('when a users row is read, then the password is a bcrypt hash at the configured cost', async () => {
    const { rows } = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE username = $1', [
      admin.username,
    ]);

    expect(rows[0]!.password_hash).toMatch(/^\$2[aby]\$04\$[./A-Za-z0-9]{53}$/);
  });
});
