import { runMaintenance } from '../../../src/maintenance';
import { IDLE_SLACK_SECONDS } from '../../../src/key-policies/policy';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, loginWithApiKey } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { KEYS, createKeyWithPolicy, getPolicy, keyRow, putPolicy, refusedEventsOf } from './support';

const DAY = 86_400;
const exchange = (t: TestApp, key: { appname: string; appkey: string }) => t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) });

/**
 * Contract, "Key policies": max_idle_days, counted from the latest of last_used, when the field was
 * set, and when the key was last enabled, turns the key off at its next use or in the maintenance
 * pass, whichever comes first; api_key.expired is written once, at use or in the pass.
 */
describe('key policies: idle keys and expiry (the policies\' clock moved)', () => {
  let t: TestApp;
  let ahead = 0;
  const clock = () => Date.now() / 1000 + ahead;

  beforeAll(async () => {
    t = await startTestApp({}, { clock });
  });
  afterEach(() => {
    ahead = 0;
  });
  afterAll(() => t.close());

  const eventsOf = async (appname: string, type: string) =>
    (await t.db.query<{ details: Record<string, unknown> }>('SELECT details FROM audit_events WHERE appname = $1 AND type = $2 ORDER BY id', [appname, type])).rows.map(
      (r) => r.details,
    );
  const maintenance = (batchSize?: number) => runMaintenance(t.db, { intervalSeconds: 60, clockTolerance: 0, webhookRetentionDays: 30, clock }, { batchSize });

  it('when a key is used after max_idle_days without use, then that use is refused as disabled, the key is off (idle), and its sessions end', async () => {
    const key = await createKeyWithPolicy(t, { max_idle_days: 2 });
    const tokens = await loginWithApiKey(t, key);

    ahead = 2 * DAY + IDLE_SLACK_SECONDS + 1;
    const res = await exchange(t, key);

    expect(res.status).toBe(401);
    expect(res.body.message).toBe('API key disabled');
    expect((await refusedEventsOf(t, res))[0]!.details.reason).toBe('disabled');
    expect(await keyRow(t, key.appname)).toMatchObject({ enabled: false, disabled_reason: 'idle' });
    expect(await eventsOf(key.appname, 'api_key.disabled')).toEqual([{ reason: 'idle', sessions_revoked: 1 }]);
    expect((await t.http().get(KEYS).set(bearer(tokens.access_token))).status).toBe(401);
  });

  it('when a key is used before max_idle_days run out, then the count starts again from that use', async () => {
    const key = await createKeyWithPolicy(t, { max_idle_days: 2 });

    ahead = 1.5 * DAY;
    const first = await exchange(t, key);
    ahead = 3 * DAY;
    const second = await exchange(t, key);
    ahead = 5.1 * DAY;
    const third = await exchange(t, key);

    expect([first.status, second.status, third.status]).toEqual([200, 200, 401]);
  });

  it('when the idle rule is set later, or the key turned on again, then the count starts from that moment', async () => {
    const key = await createKeyWithPolicy(t, {});

    ahead = 10 * DAY;
    await putPolicy(t, key.appname, { max_idle_days: 1 });
    ahead = 10.5 * DAY;
    const afterSetting = await exchange(t, key);
    await putPolicy(t, key.appname, { max_idle_days: 1, enabled: false });
    ahead = 20 * DAY;
    await putPolicy(t, key.appname, { max_idle_days: 1, enabled: true });
    ahead = 20.5 * DAY;
    const afterEnabling = await exchange(t, key);

    expect(afterSetting.status).toBe(200);
    expect(afterEnabling.status).toBe(200);
  });

  it('when the maintenance pass runs, then it turns idle keys off in batches and records each once, and leaves the others', async () => {
    const idle = await Promise.all(Array.from({ length: 5 }, () => createKeyWithPolicy(t, { max_idle_days: 3 })));
    const fresh = await createKeyWithPolicy(t, { max_idle_days: 30 });

    ahead = 3 * DAY + IDLE_SLACK_SECONDS + 1;
    const report = await maintenance(2);
    const again = await maintenance(2);

    expect(report.batches.idleKeys.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...report.batches.idleKeys)).toBeLessThanOrEqual(2);
    expect(again.batches.idleKeys).toEqual([0]);
    for (const key of idle) {
      expect(await getPolicy(t, key.appname)).toMatchObject({ enabled: false, disabled_reason: 'idle' });
      expect(await eventsOf(key.appname, 'api_key.disabled')).toEqual([{ reason: 'idle', sessions_revoked: 0 }]);
    }
    expect(await getPolicy(t, fresh.appname)).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('when a key expires, then the pass records api_key.expired once, and a use refused as expired does not record it again', async () => {
    const seen = await createKeyWithPolicy(t, { expires_at: Math.floor(Date.now() / 1000) + 60 });
    const used = await createKeyWithPolicy(t, { expires_at: Math.floor(Date.now() / 1000) + 60 });

    ahead = 120;
    const refused = await exchange(t, used);
    await maintenance();
    await maintenance();
    const refusedAgain = await exchange(t, seen);

    expect(refused.body.message).toBe('API key expired');
    expect(refusedAgain.body.message).toBe('API key expired');
    for (const key of [seen, used]) expect(await eventsOf(key.appname, 'api_key.expired')).toEqual([{ expires_at: expect.any(Number) }]);
  });

  it('when an expired key is given a later expiry, then its next expiry is recorded again', async () => {
    const key = await createKeyWithPolicy(t, { expires_at: Math.floor(Date.now() / 1000) + 60 });
    ahead = 120;
    await maintenance();

    await putPolicy(t, key.appname, { expires_at: Math.floor(clock()) + 60 });
    ahead = 240;
    await maintenance();

    expect(await eventsOf(key.appname, 'api_key.expired')).toHaveLength(2);
  });
});
