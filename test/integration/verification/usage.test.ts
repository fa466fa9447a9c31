import { startTestApp, type TestApp, startTwoInstances, closeInstances } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { bearer, tokenForRole } from '../../helpers/factories';
import { runMaintenance } from '../../../src/maintenance';
import { signRequestToken } from '../../helpers/tokens';
import { basic, createKeyWithPolicy, KEYS } from '../key-policies/support';

/**
 * Contract, "Verifying keys, usage, leaks and imports": usage per key and interval, counted in memory
 * on each instance and added up in the database by their flushes.
 */
const usagePath = (appname: string) => `${KEYS}/${appname}/usage`;
const VERIFY = '/api/v1/keys/verify';
const HOUR = 3600;
const DAY = 86_400;

onSharedServerOnly()('usage counts', () => {
  let a: TestApp;
  let b: TestApp;
  let viewer: string;

  beforeAll(async () => {
    [a, b] = await startTwoInstances();
    viewer = await tokenForRole(a, 'viewer');
  });
  afterAll(() => closeInstances(a, b));

  const flushBoth = () => Promise.all([a.services.usageRecorder.flush(), b.services.usageRecorder.flush()]);
  const clientCredentials = (t: TestApp, appname: string, appkey: string) =>
    t.http().post('/oauth2/token').type('form').set('Authorization', basic(appname, appkey)).send({ grant_type: 'client_credentials' });

  it('when a key gets tokens, verifications and refusals on two instances, then after a flush the usage route counts each, in the current hour and day', async () => {
    const key = await createKeyWithPolicy(a, { rate_limit: { limit: 5, window_seconds: 3600 } });
    await flushBoth();

    // Without Redis each instance counts the rate limit on its own: a sees 5 uses (a token, 3 VALID, 1 INSUFFICIENT_PERMISSIONS)...
    expect((await clientCredentials(a, key.appname, key.appkey)).status).toBe(200);
    expect((await clientCredentials(b, key.appname, key.appkey)).status).toBe(200);
    for (const t of [a, b, a, a]) expect((await t.http().post(VERIFY).set(bearer(viewer)).send({ key: key.appkey })).body.code).toBe('VALID');
    expect((await a.http().post(VERIFY).set(bearer(viewer)).send({ key: key.appkey, permissions: ['billing:write'] })).body.code).toBe('INSUFFICIENT_PERMISSIONS');
    // ...so its next token request is refused as rate_limited, and its next verification RATE_LIMITED.
    expect((await clientCredentials(a, key.appname, key.appkey)).status).toBe(429);
    expect((await a.http().post(VERIFY).set(bearer(viewer)).send({ key: key.appkey })).body.code).toBe('RATE_LIMITED');
    const before = await a.http().get(usagePath(key.appname)).set(bearer(viewer));
    await flushBoth();
    const after = await b.http().get(usagePath(key.appname)).set(bearer(viewer));
    const hourly = await a.http().get(usagePath(key.appname)).query({ interval: 'hour' }).set(bearer(viewer));

    expect(before.status).toBe(200);
    expect(before.body.data).toEqual([]);
    const now = Date.now() / 1000;
    const counted = { tokens: 2, verifications: { VALID: 4, INSUFFICIENT_PERMISSIONS: 1, RATE_LIMITED: 1 }, refused: { rate_limited: 1 } };
    expect(after.body).toEqual({ meta: { code: 200, count: 1 }, data: [{ start: Math.floor(now / DAY) * DAY, ...counted }] });
    expect(hourly.body.data).toEqual([{ start: Math.floor(now / HOUR) * HOUR, ...counted }]);
  });

  it('when a key gets tokens by its request token, a refresh and the jwt-bearer grant, then each token issued counts', async () => {
    const key = await createKeyWithPolicy(a, {});
    const exchanged = await a.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) });
    const refreshed = await b.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: exchanged.body.refresh_token });
    const bearerGrant = await b
      .http()
      .post('/oauth2/token')
      .type('form')
      .send({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signRequestToken(key.appname, key.appkey, { claims: { aud: 'http://issuer.test' } }) });
    await flushBoth();

    const usage = await a.http().get(usagePath(key.appname)).set(bearer(viewer));

    expect([exchanged.status, refreshed.status, bearerGrant.status]).toEqual([200, 200, 200]);
    expect(usage.body.data).toEqual([expect.objectContaining({ tokens: 3, verifications: {}, refused: {} })]);
  });

  it('when an instance stops gracefully, then the counts it held are written (nothing waits for the next window)', async () => {
    const c = await startTestApp({ USAGE_FLUSH_SECONDS: '300' }, { joining: a });
    const key = await createKeyWithPolicy(a, {});
    await c.http().post(VERIFY).set(bearer(viewer)).send({ key: key.appkey });
    const held = await a.http().get(usagePath(key.appname)).set(bearer(viewer));

    await c.close();
    const written = await a.http().get(usagePath(key.appname)).set(bearer(viewer));

    expect(held.body.data).toEqual([]);
    expect(written.body.data).toEqual([expect.objectContaining({ verifications: { VALID: 1 } })]);
  });

  it('when counts are in several hours, then they come oldest first, one object per interval with use, split by since and until', async () => {
    const key = await createKeyWithPolicy(a, {});
    const id = (await a.db.query<{ id: string }>('SELECT id FROM api_keys WHERE appname = $1', [key.appname])).rows[0]!.id;
    const day = Math.floor(Date.now() / 1000 / DAY) * DAY - 3 * DAY;
    await a.db.query(
      `INSERT INTO api_key_usage (api_key_id, hour, kind, n) VALUES
         ($1, to_timestamp($2), 'tokens', 4), ($1, to_timestamp($2 + 3600), 'tokens', 1),
         ($1, to_timestamp($2 + 3600), 'verification:VALID', 7), ($1, to_timestamp($2 + 86400), 'refused:disabled', 2)`,
      [id, day],
    );

    const days = await a.http().get(usagePath(key.appname)).set(bearer(viewer));
    const hours = await a.http().get(usagePath(key.appname)).query({ interval: 'hour', since: day, until: day + DAY }).set(bearer(viewer));
    const fromSecondHour = await a.http().get(usagePath(key.appname)).query({ interval: 'hour', since: day + HOUR + 59, until: day + 2 * DAY }).set(bearer(viewer));

    expect(days.body.data).toEqual([
      { start: day, tokens: 5, verifications: { VALID: 7 }, refused: {} },
      { start: day + DAY, tokens: 0, verifications: {}, refused: { disabled: 2 } },
    ]);
    expect(hours.body.data).toEqual([
      { start: day, tokens: 4, verifications: {}, refused: {} },
      { start: day + HOUR, tokens: 1, verifications: { VALID: 7 }, refused: {} },
    ]);
    expect(fromSecondHour.body.data.map((i: { start: number }) => i.start)).toEqual([day + HOUR, day + DAY]);
  });

  it('when the bounds span more than 1000 intervals, or since is not before until, or a field is unknown or malformed, then 400 naming the field', async () => {
    const key = await createKeyWithPolicy(a, {});
    const get = (query: Record<string, unknown>) => a.http().get(usagePath(key.appname)).query(query).set(bearer(viewer));

    const exactly1000 = await get({ interval: 'hour', since: 0, until: 1000 * HOUR });
    const over = await get({ interval: 'hour', since: 0, until: 1000 * HOUR + 1 });
    const days = await get({ interval: 'day', since: 0, until: 2000 * DAY });
    const reversed = await get({ since: 100, until: 100 });
    const unknown = await get({ interval: 'week' });
    const extra = await get({ from: 1 });
    const text = await get({ since: 'yesterday' });

    expect(exactly1000.status).toBe(200);
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/^query\.since: at most 1000 hours per answer/);
    expect(days.body.message).toMatch(/^query\.since: at most 1000 days per answer/);
    expect(reversed.body.message).toBe('query.until: must be after since');
    expect(unknown.body.message).toMatch(/^query\.interval: /);
    expect(extra.body.message).toMatch(/^query: unknown field "?from/);
    expect(text.body.message).toMatch(/^query\.since: /);
  });

  it('when the key does not exist, then 404; when the caller has no role, then 403', async () => {
    const none = await tokenForRole(a, null);

    const unknown = await a.http().get(usagePath('no-such-key')).set(bearer(viewer));
    const forbidden = await a.http().get(usagePath('no-such-key')).set(bearer(none));

    expect(unknown.status).toBe(404);
    expect(forbidden.status).toBe(403);
  });

  it('when a caller without the role asks for bounds out of range, then 400 before 403', async () => {
    const key = await createKeyWithPolicy(a, {});
    const none = await tokenForRole(a, null);
    const get = (query: Record<string, unknown>) => a.http().get(usagePath(key.appname)).query(query).set(bearer(none));

    const reversed = await get({ since: 100, until: 100 });
    const over = await get({ interval: 'hour', since: 0, until: 1000 * HOUR + 1 });
    const inRange = await get({});

    expect([reversed.status, reversed.body.message]).toEqual([400, 'query.until: must be after since']);
    expect([over.status, over.body.message]).toEqual([400, expect.stringMatching(/^query\.since: at most 1000 hours/)]);
    expect(inRange.status).toBe(403);
  });

  it('when a key is deleted, then its usage rows go with it, and a key created again under its name starts from nothing', async () => {
    const key = await createKeyWithPolicy(a, {});
    await a.http().post(VERIFY).set(bearer(viewer)).send({ key: key.appkey });
    await flushBoth();
    const admin = await tokenForRole(a, 'admin');

    expect((await a.db.query('SELECT 1 FROM api_key_usage u JOIN api_keys k ON k.id = u.api_key_id WHERE k.appname = $1', [key.appname])).rowCount).toBe(1);
    await a.http().delete(`${KEYS}/${key.appname}`).set(bearer(admin));
    await a.http().post(KEYS).set(bearer(admin)).send({ appname: key.appname, roles: [] });
    const again = await a.http().get(usagePath(key.appname)).set(bearer(viewer));

    expect(again.body.data).toEqual([]);
    expect((await a.db.query('SELECT count(*)::int AS n FROM api_key_usage u LEFT JOIN api_keys k ON k.id = u.api_key_id WHERE k.id IS NULL')).rows[0]).toEqual({ n: 0 });
  });

  it('when counts are older than USAGE_RETENTION_DAYS, then the maintenance pass deletes them and keeps the younger ones', async () => {
    const key = await createKeyWithPolicy(a, {});
    const id = (await a.db.query<{ id: string }>('SELECT id FROM api_keys WHERE appname = $1', [key.appname])).rows[0]!.id;
    await a.db.query(
      `INSERT INTO api_key_usage (api_key_id, hour, kind, n) VALUES
         ($1, date_trunc('hour', now()) - interval '11 days', 'tokens', 1), ($1, date_trunc('hour', now()) - interval '9 days', 'tokens', 2)`,
      [id],
    );

    const report = await runMaintenance(a.db, { intervalSeconds: 60, clockTolerance: 0, webhookRetentionDays: 30, usageRetentionDays: 10 });
    const left = await a.db.query<{ n: string }>('SELECT n FROM api_key_usage WHERE api_key_id = $1', [id]);

    expect(report.batches.usage.reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(1);
    expect(left.rows.map((r) => Number(r.n))).toEqual([2]);
  });
});

describe('USAGE_COUNTING=false (the benchmark measures what counting costs with it)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ USAGE_COUNTING: 'false' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('when a key is used, then nothing is counted, but last_used of a verification is still written', async () => {
    const viewer = await tokenForRole(t, 'viewer');
    const key = await createKeyWithPolicy(t, {});
    await t.http().post(VERIFY).set(bearer(viewer)).send({ key: key.appkey });
    await t.services.usageRecorder.flush();
    // Read before the token request below, which writes last_used itself.
    const policy = await t.http().get(`${KEYS}/${key.appname}/policy`).set(bearer(viewer));
    await t.http().post('/oauth2/token').type('form').set('Authorization', basic(key.appname, key.appkey)).send({ grant_type: 'client_credentials' });
    await t.services.usageRecorder.flush();

    const usage = await t.http().get(usagePath(key.appname)).set(bearer(viewer));

    expect(policy.body.data.last_used).toBeGreaterThan(0);
    expect(usage.body.data).toEqual([]);
  });
});

describe('usage configuration', () => {
  it('when USAGE_RETENTION_DAYS is not set, then it is 400; USAGE_FLUSH_SECONDS 5', async () => {
    const { loadConfig } = await import('../../../src/config');
    const config = loadConfig({ NODE_ENV: 'test', MASTER_KEY: Buffer.alloc(32, 1).toString('base64'), DATABASE_URL: 'postgres://x@127.0.0.1/x' });

    expect(config.usage).toEqual({ retentionDays: 400, flushSeconds: 5, counting: true });
  });
});
