import { randomBytes } from 'node:crypto';
import { runMaintenance, type MaintenanceSettings } from '../../../src/maintenance';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, createUser, loginAs } from '../../helpers/factories';
import { createTestDatabase, itOnSharedServerOnly, type TestDatabase } from '../../helpers/database';

const settings = (overrides: Partial<MaintenanceSettings> = {}): MaintenanceSettings => ({
  intervalSeconds: 60,
  clockTolerance: 0,
  webhookRetentionDays: 30,
  ...overrides,
});

// The lock runMaintenance takes (src/maintenance.ts): held here, it stands for another instance in the middle of a batch.
const MAINTENANCE_LOCK_ID = 7_240_613;

describe('maintenance: pruning in batches, one instance at a time', () => {
  let t: TestApp;
  let userId: string;

  beforeAll(async () => {
    // The app's own loop stays out of the way: each test runs a round itself.
    t = await startTestApp({ MAINTENANCE_INTERVAL_SECONDS: '3600' });
    const { username } = await createUser(t, { role: 'viewer' });
    userId = (await t.db.query<{ id: string }>('SELECT id FROM users WHERE username = $1', [username])).rows[0]!.id;
  });
  afterAll(() => t.close());

  /** `count` sessions of the test user: ended (expired an hour ago, or revoked) or live. */
  async function addSessions(count: number, state: 'expired' | 'revoked' | 'live'): Promise<void> {
    await t.db.query(
      `INSERT INTO sessions (id, user_id, refresh_jti, refresh_expires_at, expires_at, revoked_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), now() + interval '10 minutes',
              now() + CASE WHEN $3 = 'expired' THEN interval '-1 hour' ELSE interval '1 hour' END,
              CASE WHEN $3 = 'revoked' THEN now() END
         FROM generate_series(1, $2)`,
      [userId, count, state],
    );
  }

  const sessionCount = async () => Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM sessions')).rows[0]!.n);
  const clearSessions = () => t.db.query('DELETE FROM sessions');

  it('when 5,000 sessions have ended, then one round deletes them all in batches of at most 1,000 and keeps the live ones', async () => {
    await clearSessions();
    await addSessions(4_000, 'expired');
    await addSessions(1_000, 'revoked');
    await addSessions(30, 'live');

    const report = await runMaintenance(t.db, settings());

    expect(report.skipped).toBe(false);
    expect(report.batches.sessions).toEqual([1_000, 1_000, 1_000, 1_000, 1_000, 0]);
    expect(await sessionCount()).toBe(30);
  });

  it('when a login is still live after a round, then its access token still works', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const tokens = await loginAs(t, user);

    await runMaintenance(t.db, settings());

    await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
  });

  it('when request tokens have expired, then their replay records are deleted in batches and the unexpired ones kept', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const { rows } = await t.db.query<{ id: string }>('SELECT id FROM api_keys WHERE appname = $1', [key.appname]);
    await t.db.query(
      `INSERT INTO request_token_jtis (api_key_id, jti, expires_at)
       SELECT $1, 'jti-' || i, now() + CASE WHEN i <= 2500 THEN interval '-1 minute' ELSE interval '5 minutes' END
         FROM generate_series(1, 2510) AS i`,
      [rows[0]!.id],
    );

    const report = await runMaintenance(t.db, settings());

    expect(report.batches.replayRecords).toEqual([1_000, 1_000, 500]);
    const left = await t.db.query<{ jti: string }>('SELECT jti FROM request_token_jtis WHERE api_key_id = $1', [rows[0]!.id]);
    expect(left.rows).toHaveLength(10);
  });

  it('when a grace has ended, then the previous appkey is forgotten, and one still running is kept', async () => {
    const [ended, running] = [await createApiKey(t, { role: 'viewer' }), await createApiKey(t, { role: 'viewer' })];
    await t.db.query(
      `UPDATE api_keys SET previous_key_ciphertext = key_ciphertext,
              previous_key_valid_until = now() + CASE WHEN appname = $1 THEN interval '-1 second' ELSE interval '1 hour' END
        WHERE appname IN ($1, $2)`,
      [ended.appname, running.appname],
    );

    const report = await runMaintenance(t.db, settings());

    expect(report.batches.graces).toEqual([1]);
    const { rows } = await t.db.query<{ appname: string; kept: boolean }>(
      'SELECT appname, previous_key_ciphertext IS NOT NULL AS kept FROM api_keys WHERE appname IN ($1, $2) ORDER BY appname = $1',
      [ended.appname, running.appname],
    );
    expect(rows).toEqual([
      { appname: running.appname, kept: true },
      { appname: ended.appname, kept: false },
    ]);
  });

  itOnSharedServerOnly()('when another instance holds the maintenance lock, then a round skips and deletes nothing', async () => {
    await clearSessions();
    await addSessions(50, 'expired');

    const report = await t.db.withTransaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MAINTENANCE_LOCK_ID]);
      return runMaintenance(t.db, settings());
    });

    expect(report.skipped).toBe(true);
    expect(report.batches.sessions).toEqual([]);
    expect(await sessionCount()).toBe(50);
    // Once the lock is free again, the next round does the work.
    expect((await runMaintenance(t.db, settings())).batches.sessions).toEqual([50]);
  });

  itOnSharedServerOnly()('when two instances run a round at the same moment, then one skips and every ended session is deleted once', async () => {
    await clearSessions();
    await addSessions(5_000, 'expired');

    const reports = await Promise.all([runMaintenance(t.db, settings()), runMaintenance(t.db, settings())]);

    expect(reports.filter((r) => r.skipped).length).toBeGreaterThanOrEqual(1);
    const deleted = reports.flatMap((r) => r.batches.sessions);
    expect(deleted.every((n) => n <= 1_000)).toBe(true);
    expect(deleted.reduce((a, b) => a + b, 0)).toBe(5_000);
    expect(await sessionCount()).toBe(0);
  });
});

describe('maintenance: audit retention, as the service last started set it', () => {
  // One database that instances start on in turn, as a redeploy with a new AUDIT_RETENTION_DAYS does.
  let db: TestDatabase;
  let t: TestApp | undefined;
  const masterKey = randomBytes(32).toString('base64');

  const startWithRetention = async (days: string): Promise<TestApp> => {
    await t?.close();
    t = await startTestApp({ DATABASE_URL: db.url, MASTER_KEY: masterKey, AUDIT_RETENTION_DAYS: days });
    return t;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.close();
    await db.drop();
  });

  /** `count` events marked with `actor`, occurred `daysAgo` days ago. */
  const addEvents = (count: number, daysAgo: number, actor: string) =>
    t!.db.query(
      `INSERT INTO audit_events (occurred_at, type, actor, details)
       SELECT now() - make_interval(days => $2), 'session.revoked', $3, '{"route": "test"}'
         FROM generate_series(1, $1)`,
      [count, daysAgo, actor],
    );
  const countsByActor = async () =>
    Object.fromEntries(
      (await t!.db.query<{ actor: string; n: number }>("SELECT actor, count(*)::int AS n FROM audit_events WHERE actor LIKE 'aged-%' GROUP BY actor")).rows.map(
        (r) => [r.actor, r.n],
      ),
    );
  const retentionInDatabase = async () => (await t!.db.query<{ days: number }>('SELECT days FROM audit_retention')).rows[0]!.days;

  it('when the service starts with AUDIT_RETENTION_DAYS=0, then that is the retention in the database and a round keeps every event, however old', async () => {
    await startWithRetention('0');
    await addEvents(20, 4_000, 'aged-ancient');

    const report = await runMaintenance(t!.db, settings());

    expect(await retentionInDatabase()).toBe(0);
    expect(report.batches.auditEvents).toEqual([0]);
    expect(await countsByActor()).toEqual({ 'aged-ancient': 20 });
  });

  it('when it starts again with AUDIT_RETENTION_DAYS=400, then older events are deleted in batches of at most 1,000 and the newer ones kept', async () => {
    await startWithRetention('400');
    await addEvents(2_480, 401, 'aged-401');
    await addEvents(30, 399, 'aged-399');
    await addEvents(5, 0, 'aged-0');

    const report = await runMaintenance(t!.db, settings());

    expect(await retentionInDatabase()).toBe(400);
    // The 20 ancient events of the previous test go too.
    expect(report.batches.auditEvents).toEqual([1_000, 1_000, 500]);
    expect(await countsByActor()).toEqual({ 'aged-399': 30, 'aged-0': 5 });
  });

  it('when prune_audit_events is called with a retention of its own or a batch out of 1..1000, then it is refused and nothing is deleted', async () => {
    await expect(t!.db.query('SELECT prune_audit_events(1, 1000)')).rejects.toThrow(/does not exist/);
    await expect(t!.db.query('SELECT prune_audit_events(1001)')).rejects.toThrow(/batch size/);
    await expect(t!.db.query('SELECT prune_audit_events(0)')).rejects.toThrow(/batch size/);

    expect(await countsByActor()).toEqual({ 'aged-399': 30, 'aged-0': 5 });
  });

  it('when a DELETE outside prune_audit_events forges its setting, then events younger than a day are still refused', async () => {
    const attempt = t!.db.withTransaction(async (tx) => {
      await tx.query("SELECT set_config('audit_events.delete_before', extract(epoch FROM now())::bigint::text, true)");
      await tx.query("DELETE FROM audit_events WHERE actor = 'aged-0'");
    });

    await expect(attempt).rejects.toThrow(/append-only/);
    expect(await countsByActor()).toEqual({ 'aged-399': 30, 'aged-0': 5 });
  });

  it('when prune_audit_events has run in a transaction, then a DELETE after it in the same transaction is refused', async () => {
    await addEvents(3, 500, 'aged-500');

    const attempt = t!.db.withTransaction(async (tx) => {
      await tx.query('SELECT prune_audit_events(1)');
      await tx.query("DELETE FROM audit_events WHERE actor = 'aged-500'");
    });

    await expect(attempt).rejects.toThrow(/append-only/);
    expect(await countsByActor()).toEqual({ 'aged-500': 3, 'aged-399': 30, 'aged-0': 5 });
  });
});
