import { createCipheriv, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { runKeysCommand } from '../../../src/cli/keys.command';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createTestDatabase, type TestDatabase } from '../../helpers/database';
import { createApiKey, type TestApiKey } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';

/** An appkey sealed in the first format (version 1 | iv | tag | body, AAD the appname), as stored before key ids. */
function legacySealed(masterKey: Buffer, appkey: string, appname: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  cipher.setAAD(Buffer.from(appname));
  const body = Buffer.concat([cipher.update(appkey), cipher.final()]);
  return Buffer.concat([Buffer.from([1]), iv, cipher.getAuthTag(), body]);
}

async function storeSealedAppkey(db: TestDatabase, appname: string, sealed: Buffer): Promise<void> {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query('UPDATE api_keys SET key_ciphertext = $2 WHERE appname = $1', [appname, sealed]);
  } finally {
    await client.end();
  }
}

describe('every sealed secret is counted at start (Hardening, round two)', () => {
  const masterKey = randomBytes(32);
  let db: TestDatabase;
  let key: TestApiKey;
  let t: TestApp | undefined;
  const start = async () => (t = await startTestApp({ DATABASE_URL: db.url, MASTER_KEY: masterKey.toString('base64') }));
  const stop = async () => {
    await t?.close();
    t = undefined;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    key = await createApiKey(await start(), { role: 'viewer' });
    await stop();
  });
  afterAll(async () => {
    await stop();
    await db.drop();
  });

  it('when an appkey is stored in the first sealed format, then the start opens it to count it and says so, it still exchanges, and `keys rewrap` moves it to the current format', async () => {
    await storeSealedAppkey(db, key.appname, legacySealed(masterKey, key.appkey, key.appname));

    const app = await start();

    expect(app.logs()).toContain('1 stored secrets are in the first sealed format');
    expect((await app.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) })).status).toBe(200);
    expect(await runKeysCommand(app.services, ['rewrap'])).toMatch(/^Re-encrypted 1 secrets/);
    await stop();
    expect((await start()).logs()).not.toContain('first sealed format');
    await stop();
  });

  it('when an appkey in the first format was sealed under another key, then the start is refused, counting it', async () => {
    await storeSealedAppkey(db, key.appname, legacySealed(randomBytes(32), key.appkey, key.appname));

    await expect(start()).rejects.toThrow(/^MASTER_KEY: 1 of the 2 secrets stored in the database do not open under MASTER_KEY\./);
  });
});
