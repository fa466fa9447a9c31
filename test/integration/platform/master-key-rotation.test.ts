import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { runKeysCommand } from '../../../src/cli/keys.command';
import { SecretBox } from '../../../src/crypto/secretbox';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createTestDatabase, type TestDatabase } from '../../helpers/database';
import { bearer, createApiKey, createUser, loginAs, type TestApiKey, type TestUser } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { startServerProcess } from '../process/server-process';

const newKey = () => randomBytes(32).toString('base64');

/** Every sealed value in the database, with the associated data it was sealed for. */
async function sealedValues(db: TestDatabase): Promise<Array<{ what: string; sealed: Buffer; aad: string }>> {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    const signing = await client.query<{ kid: string; private_key_ciphertext: Buffer }>('SELECT kid, private_key_ciphertext FROM signing_keys');
    const appkeys = await client.query<{ appname: string; key_ciphertext: Buffer; previous_key_ciphertext: Buffer | null }>(
      'SELECT appname, key_ciphertext, previous_key_ciphertext FROM api_keys',
    );
    return [
      ...signing.rows.map((r) => ({ what: `signing key ${r.kid}`, sealed: r.private_key_ciphertext, aad: r.kid })),
      ...appkeys.rows.map((r) => ({ what: `appkey of ${r.appname}`, sealed: r.key_ciphertext, aad: r.appname })),
      ...appkeys.rows
        .filter((r) => r.previous_key_ciphertext)
        .map((r) => ({ what: `previous appkey of ${r.appname}`, sealed: r.previous_key_ciphertext!, aad: r.appname })),
    ];
  } finally {
    await client.end();
  }
}

const opensUnder = (key: string) => (value: { sealed: Buffer; aad: string }) => {
  try {
    new SecretBox(Buffer.from(key, 'base64')).open(value.sealed, value.aad);
    return true;
  } catch {
    return false;
  }
};

async function exchanges(t: TestApp, key: TestApiKey): Promise<number> {
  return (await t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) })).status;
}

async function refreshes(t: TestApp, refreshToken: string): Promise<{ status: number; refreshToken: string }> {
  const res = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: refreshToken });
  return { status: res.status, refreshToken: res.body.refresh_token as string };
}

describe('rotating MASTER_KEY: MASTER_KEY_PREVIOUS and `keys rewrap`', () => {
  const oldKey = newKey();
  const currentKey = newKey();
  let db: TestDatabase;
  let t: TestApp | undefined;
  // Made under the old key.
  let user: TestUser;
  let plain: TestApiKey;
  let rolled: { current: TestApiKey; previous: TestApiKey };
  let refreshBeforeRotation: string;
  let unusedRefreshBeforeRotation: string;
  // Made during the rotation.
  let madeDuring: TestApiKey;
  let refreshAfterRewrap: string;

  const start = async (env: Record<string, string | undefined>) => {
    t = await startTestApp({ DATABASE_URL: db.url, ...env });
    return t;
  };
  const stop = async () => {
    await t?.close();
    t = undefined;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await stop();
    await db.drop();
  });

  it('when the service runs under the old key, then users, keys, a regen with grace and two signing keys are stored under it', async () => {
    const app = await start({ MASTER_KEY: oldKey });
    user = await createUser(app, { role: 'admin' });
    plain = await createApiKey(app, { role: 'viewer' });
    const previous = await createApiKey(app, { role: 'viewer' });
    const regen = await app
      .http()
      .put(`/api/v1/api-keys/${previous.appname}/regen?grace_seconds=3600`)
      .set(bearer((await loginAs(app, user)).access_token))
      .send({ description: 'rolled', roles: ['viewer'] });
    expect(regen.status).toBe(200);
    rolled = { previous, current: { appname: previous.appname, appkey: regen.body.data.appkey } };
    await runKeysCommand(app.services, ['rotate']);
    refreshBeforeRotation = (await loginAs(app, user)).refresh_token;
    unusedRefreshBeforeRotation = (await loginAs(app, user)).refresh_token;
    await stop();

    const values = await sealedValues(db);
    // 2 signing keys, 2 appkeys, 1 previous appkey in its grace.
    expect(values).toHaveLength(5);
    expect(values.every(opensUnder(oldKey))).toBe(true);
  });

  it('when MASTER_KEY is the new key and MASTER_KEY_PREVIOUS the old one, then the service starts and everything made before works, and new secrets are sealed under the new key', async () => {
    const app = await start({ MASTER_KEY: currentKey, MASTER_KEY_PREVIOUS: oldKey });

    expect((await app.http().post('/api/auth/bearer/token').type('form').send(user)).status).toBe(200);
    expect(await exchanges(app, plain)).toBe(200);
    expect(await exchanges(app, rolled.current)).toBe(200);
    expect(await exchanges(app, rolled.previous)).toBe(200);
    const refreshed = await refreshes(app, refreshBeforeRotation);
    expect(refreshed.status).toBe(200);
    refreshAfterRewrap = refreshed.refreshToken;

    madeDuring = await createApiKey(app, { role: 'viewer' });
    const sealedForIt = (await sealedValues(db)).find((v) => v.aad === madeDuring.appname)!;
    expect(opensUnder(currentKey)(sealedForIt)).toBe(true);
    expect(opensUnder(oldKey)(sealedForIt)).toBe(false);
  });

  it('when the rotation is half done and MASTER_KEY_PREVIOUS is dropped before `keys rewrap`, then the start is refused, counting the secrets only the old key opens (Hardening, round two)', async () => {
    expect(t!.logs()).toContain('5 stored secrets are still sealed under MASTER_KEY_PREVIOUS');

    const early = startTestApp({ DATABASE_URL: db.url, MASTER_KEY: currentKey });

    await expect(early).rejects.toThrow(/^MASTER_KEY: 5 of the 6 secrets stored in the database do not open under MASTER_KEY\..*MASTER_KEY_PREVIOUS/);
  });

  it('when `keys rewrap` runs, then it re-encrypts every secret under the old key, says how many, and a second run finds nothing left', async () => {
    const app = t!;

    const first = await runKeysCommand(app.services, ['rewrap']);
    const second = await runKeysCommand(app.services, ['rewrap']);

    expect(first).toMatch(/^Re-encrypted 5 secrets under MASTER_KEY \(2 signing keys, 3 appkeys, 0 webhook secrets\)/);
    expect(second).toMatch(/^Re-encrypted 0 secrets/);
    const values = await sealedValues(db);
    expect(values.filter((v) => !opensUnder(currentKey)(v)).map((v) => v.what)).toEqual([]);
    expect(values.filter(opensUnder(oldKey)).map((v) => v.what)).toEqual([]);
    // Still serving while and after it ran.
    expect(await exchanges(app, plain)).toBe(200);
    await stop();
  });

  it('when the service starts again with the new key alone, then every key still exchanges, the user logs in, the signing key signs and refresh tokens issued since the rotation refresh', async () => {
    const app = await start({ MASTER_KEY: currentKey });

    for (const key of [plain, rolled.current, rolled.previous, madeDuring]) expect(await exchanges(app, key)).toBe(200);
    const login = await loginAs(app, user);
    const keys = await app.http().get('/api/v1/api-keys').set(bearer(login.access_token));
    expect(keys.status).toBe(200);
    expect((await refreshes(app, refreshAfterRewrap)).status).toBe(200);
    // Signed with the old key's refresh-token secret, which is gone with MASTER_KEY_PREVIOUS (docs/operations.md, "Rotating MASTER_KEY").
    expect((await refreshes(app, unusedRefreshBeforeRotation)).status).toBe(401);
    await stop();
  });

  it('when MASTER_KEY opens none of the stored secrets, then the start is refused with a message naming the variable, not a crypto error', async () => {
    const wrong = startTestApp({ DATABASE_URL: db.url, MASTER_KEY: newKey() });
    await expect(wrong).rejects.toThrow(/^MASTER_KEY: 6 of the 6 secrets stored in the database do not open under MASTER_KEY\./);
    await expect(wrong).rejects.not.toThrow(/authenticate|Unsupported state/);

    const wrongPair = startTestApp({ DATABASE_URL: db.url, MASTER_KEY: newKey(), MASTER_KEY_PREVIOUS: oldKey });
    await expect(wrongPair).rejects.toThrow(/open under neither MASTER_KEY nor MASTER_KEY_PREVIOUS/);
  });

  it('when the service process starts with a wrong MASTER_KEY, then it exits non-zero saying MASTER_KEY, and no crypto error', async () => {
    const start = startServerProcess({ MASTER_KEY: newKey() }, { database: db });

    const error = await start.then(
      () => new Error('the service started'),
      (err: Error) => err,
    );
    expect(error.message).toMatch(/exited during start \(code 1/);
    expect(error.message).toContain('Failed to start: MASTER_KEY: 6 of the 6 secrets stored in the database do not open under MASTER_KEY');
    expect(error.message).not.toMatch(/authenticate data|Unsupported state/);
  }, 60_000);
});
