import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { runKeysCommand } from '../../../src/cli/keys.command';
import { SecretBox } from '../../../src/crypto/secretbox';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createTestDatabase, type TestDatabase } from '../../helpers/database';
import { bearer } from '../../helpers/factories';
import { adminToken, createEndpoint, FAST_WEBHOOKS, startReceiver, WEBHOOKS, type Receiver } from './support';

const newKey = () => randomBytes(32).toString('base64');

/** Whether every sealed webhook secret opens under `key` (bound to its endpoint). */
async function secretsOpenUnder(t: TestApp, key: string): Promise<boolean[]> {
  const box = new SecretBox(Buffer.from(key, 'base64'));
  const { rows } = await t.db.query<{ id: string; secret_ciphertext: Buffer; previous_secret_ciphertext: Buffer | null }>(
    'SELECT id, secret_ciphertext, previous_secret_ciphertext FROM webhook_endpoints',
  );
  const opens = (sealed: Buffer, id: string) => {
    try {
      box.open(sealed, `webhook:${id}`);
      return true;
    } catch {
      return false;
    }
  };
  return rows.flatMap((r) => [opens(r.secret_ciphertext, r.id), ...(r.previous_secret_ciphertext ? [opens(r.previous_secret_ciphertext, r.id)] : [])]);
}

describe('webhook secrets and MASTER_KEY: sealed, re-sealed by `keys rewrap`, checked at start', () => {
  const oldKey = newKey();
  const currentKey = newKey();
  let db: TestDatabase;
  let receiver: Receiver;
  let t: TestApp | undefined;
  let endpoint: { id: string };
  let secret: string;

  const start = async (env: Record<string, string>) => (t = await startTestApp({ ...FAST_WEBHOOKS, DATABASE_URL: db.url, ...env }));
  const stop = async () => {
    await t?.close();
    t = undefined;
  };
  const sendTest = async (app: TestApp) => {
    const before = receiver.received.length;
    expect((await app.http().post(`${WEBHOOKS}/${endpoint.id}/test`).set(bearer(await adminToken(app)))).status).toBe(202);
    return (await receiver.waitFor(before + 1))[before]!;
  };
  const verifies = (got: Awaited<ReturnType<typeof sendTest>>, withSecret: string) =>
    new Webhook(withSecret).verify(got.body, {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await stop();
    await receiver?.close();
    await db?.drop();
  });

  it('when an endpoint is made and its secret rotated under the old key, then both secrets are sealed under it', async () => {
    const app = await start({ MASTER_KEY: oldKey });
    const admin = await adminToken(app);
    endpoint = await createEndpoint(app, admin, { url: receiver.url, events: ['user.deleted'] });
    secret = (await app.http().post(`${WEBHOOKS}/${endpoint.id}/rotate-secret`).set(bearer(admin))).body.data.secret;

    expect(await secretsOpenUnder(app, oldKey)).toEqual([true, true]);
    await stop();
  });

  it('when MASTER_KEY is new and MASTER_KEY_PREVIOUS old, then messages are still signed, and `keys rewrap` re-seals both secrets under the new key', async () => {
    const app = await start({ MASTER_KEY: currentKey, MASTER_KEY_PREVIOUS: oldKey });
    verifies(await sendTest(app), secret);

    const message = await runKeysCommand(app.services, ['rewrap']);

    expect(message).toMatch(/, 2 webhook secrets\)/);
    expect(await secretsOpenUnder(app, currentKey)).toEqual([true, true]);
    await stop();
  });

  it('when the service starts with the new key alone, then it signs with the secret as before', async () => {
    const app = await start({ MASTER_KEY: currentKey });

    expect(verifies(await sendTest(app), secret)).toBeDefined();
    await stop();
  });

  it('when a webhook secret does not open under MASTER_KEY (the rest does), then the start is refused naming MASTER_KEY, counting the webhook secrets', async () => {
    const app = await start({ MASTER_KEY: currentKey });
    const foreign = new SecretBox(Buffer.from(newKey(), 'base64')).seal(randomBytes(32), `webhook:${endpoint.id}`);
    await app.db.query("UPDATE webhook_endpoints SET secret_ciphertext = $2, updated_at = now() - interval '1 year' WHERE id = $1", [endpoint.id, foreign]);
    await stop();

    await expect(startTestApp({ ...FAST_WEBHOOKS, DATABASE_URL: db.url, MASTER_KEY: currentKey })).rejects.toThrow(
      // The signing key, and the endpoint's current and previous secret (the rotation above is a day old at most).
      /^MASTER_KEY: 1 of the 3 secrets stored in the database do not open under MASTER_KEY\./,
    );
  });
});
