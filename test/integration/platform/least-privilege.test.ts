import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { REPOSITORY_ROOT } from '../../../scripts/harness/node-process';
import { startTestApp, type TestApp } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { bearer, createApiKey, loginWithApiKey, tokenForRole } from '../../helpers/factories';

/** Runs statements on the test server as its superuser, outside any test schema. */
async function asSuperuser(sql: string): Promise<void> {
  const client = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The SQLSTATE a statement fails with, or 'ok'. */
async function outcome(client: Client, sql: string): Promise<string> {
  try {
    await client.query(sql);
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * The docs' two roles on the test server: an owner that runs the migrations (MIGRATION_DATABASE_URL)
 * and a login role the service runs as (DATABASE_URL), to which every migration run grants what the
 * service needs (migration 0012). Both log in with passwords, as on a server whose pg_hba asks for them.
 */
onSharedServerOnly()('least-privileged database role: migrations as the owner, the service as its runtime role', () => {
  const suffix = randomBytes(5).toString('hex');
  const owner = { name: `apikeys_owner_${suffix}`, password: randomBytes(12).toString('hex') };
  const runtime = { name: `apikeys_rt_${suffix}`, password: randomBytes(12).toString('hex') };
  // A role that is neither the owner nor the runtime role: what PUBLIC may do.
  const stranger = `apikeys_other_${suffix}`;
  const schema = `t_${suffix}`;
  // A second, empty schema for `npm run migrate`.
  const cliSchema = `t_${suffix}_cli`;
  const urlFor = (role: { name: string; password: string }, inSchema = schema) => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.username = role.name;
    url.password = role.password;
    url.searchParams.set('options', `-c search_path=${inSchema}`);
    return url.toString();
  };
  let t: TestApp | undefined;
  let runtimeClient: Client;

  beforeAll(async () => {
    await asSuperuser(`
      CREATE ROLE ${owner.name} LOGIN PASSWORD '${owner.password}';
      CREATE ROLE ${runtime.name} LOGIN PASSWORD '${runtime.password}';
      CREATE ROLE ${stranger} NOLOGIN;
      CREATE SCHEMA ${schema} AUTHORIZATION ${owner.name};
      CREATE SCHEMA ${cliSchema} AUTHORIZATION ${owner.name};
    `);
    t = await startTestApp({ DATABASE_URL: urlFor(runtime), MIGRATION_DATABASE_URL: urlFor(owner), AUDIT_RETENTION_DAYS: '30' });
    runtimeClient = new Client({ connectionString: urlFor(runtime) });
    await runtimeClient.connect();
  });

  afterAll(async () => {
    await runtimeClient?.end();
    await t?.close();
    await asSuperuser(`
      DROP SCHEMA IF EXISTS ${schema} CASCADE;
      DROP SCHEMA IF EXISTS ${cliSchema} CASCADE;
      DROP OWNED BY ${owner.name}, ${runtime.name}, ${stranger};
      DROP ROLE IF EXISTS ${stranger};
      DROP ROLE IF EXISTS ${runtime.name};
      DROP ROLE IF EXISTS ${owner.name};
    `);
  });

  it('when the service runs as the runtime role, then keys, tokens and the audit trail work, and it owns nothing', async () => {
    const admin = await tokenForRole(t!, 'admin');
    const key = await createApiKey(t!, { role: 'viewer' });
    await loginWithApiKey(t!, key);
    const events = await t!.http().get(`/api/v1/audit-events?appname=${key.appname}`).set(bearer(admin));

    expect(events.status).toBe(200);
    expect(events.body.data.map((e: { type: string }) => e.type)).toContain('api_key.created');
    const { rows: who } = await t!.db.query<{ current_user: string }>('SELECT current_user');
    expect(who[0]!.current_user).toBe(runtime.name);
    const { rows: owned } = await runtimeClient.query<{ name: string; owner: string }>(
      `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner FROM pg_class c
        WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p', 'S', 'v', 'm')`,
      [schema],
    );
    expect(owned.map((r) => r.name)).toEqual(expect.arrayContaining(['api_keys', 'audit_events', 'schema_migrations', 'sessions', 'signing_keys', 'users']));
    expect(owned.filter((r) => r.owner !== owner.name)).toEqual([]);
  });

  it('when the runtime role tries to update, delete, truncate or unprotect audit events, then PostgreSQL refuses every attempt for lack of privilege', async () => {
    const count = async () => Number((await runtimeClient.query<{ n: string }>('SELECT count(*) AS n FROM audit_events')).rows[0]!.n);
    const before = await count();
    expect(before).toBeGreaterThan(0);

    const attempts = {
      update: await outcome(runtimeClient, `UPDATE audit_events SET type = 'forged'`),
      delete: await outcome(runtimeClient, 'DELETE FROM audit_events'),
      truncate: await outcome(runtimeClient, 'TRUNCATE audit_events'),
      disableTriggers: await outcome(runtimeClient, 'ALTER TABLE audit_events DISABLE TRIGGER ALL'),
      // The guard 0009 puts on DELETE (it replaced 0006's audit_events_no_update_or_delete).
      dropTrigger: await outcome(runtimeClient, 'DROP TRIGGER audit_events_delete_only_expired ON audit_events'),
      // The setting prune_audit_events() makes for its DELETE, forged: DELETE itself is not granted.
      forgedDelete: await outcome(runtimeClient, "SELECT set_config('audit_events.delete_before', '0', true); DELETE FROM audit_events"),
      replaceTriggerFunction: await outcome(runtimeClient, 'CREATE OR REPLACE FUNCTION audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$'),
      dropTable: await outcome(runtimeClient, 'DROP TABLE audit_events'),
      skipTriggers: await outcome(runtimeClient, 'SET session_replication_role = replica'),
      rewriteMigrations: await outcome(runtimeClient, 'DELETE FROM schema_migrations'),
    };

    expect(attempts).toEqual({
      update: INSUFFICIENT_PRIVILEGE,
      delete: INSUFFICIENT_PRIVILEGE,
      truncate: INSUFFICIENT_PRIVILEGE,
      disableTriggers: INSUFFICIENT_PRIVILEGE,
      dropTrigger: INSUFFICIENT_PRIVILEGE,
      forgedDelete: INSUFFICIENT_PRIVILEGE,
      replaceTriggerFunction: INSUFFICIENT_PRIVILEGE,
      dropTable: INSUFFICIENT_PRIVILEGE,
      skipTriggers: INSUFFICIENT_PRIVILEGE,
      rewriteMigrations: INSUFFICIENT_PRIVILEGE,
    });
    expect(await outcome(runtimeClient, `INSERT INTO audit_events (type, actor) VALUES ('test.probe', 'system')`)).toBe('ok');
    expect(await count()).toBe(before + 1);
  });

  it('when the runtime role inserts an audit event with its own time or id, then PostgreSQL refuses it, and nothing is added', async () => {
    const count = async () => Number((await runtimeClient.query<{ n: string }>('SELECT count(*) AS n FROM audit_events')).rows[0]!.n);
    const before = await count();

    const attempts = {
      backDated: await outcome(runtimeClient, `INSERT INTO audit_events (occurred_at, type, actor) VALUES (now() - interval '1000 days', 'test.forged', 'system')`),
      chosenId: await outcome(runtimeClient, `INSERT INTO audit_events (id, type, actor) OVERRIDING SYSTEM VALUE VALUES (1, 'test.forged', 'system')`),
    };

    expect(attempts).toEqual({ backDated: INSUFFICIENT_PRIVILEGE, chosenId: INSUFFICIENT_PRIVILEGE });
    expect(await count()).toBe(before);
  });

  it('when the runtime role tries to change the audit retention, then it is refused, and the owner wrote AUDIT_RETENTION_DAYS at start', async () => {
    const attempts = {
      update: await outcome(runtimeClient, 'UPDATE audit_retention SET days = 1'),
      delete: await outcome(runtimeClient, 'DELETE FROM audit_retention'),
      insert: await outcome(runtimeClient, 'INSERT INTO audit_retention (singleton, days) VALUES (true, 1) ON CONFLICT (singleton) DO UPDATE SET days = 1'),
      truncate: await outcome(runtimeClient, 'TRUNCATE audit_retention'),
    };

    expect(attempts).toEqual({ update: INSUFFICIENT_PRIVILEGE, delete: INSUFFICIENT_PRIVILEGE, insert: INSUFFICIENT_PRIVILEGE, truncate: INSUFFICIENT_PRIVILEGE });
    expect((await runtimeClient.query('SELECT days FROM audit_retention')).rows).toEqual([{ days: 30 }]);
  });

  it('when the runtime role calls prune_audit_events, then it deletes only what is older than the owner\'s retention, and cannot pass a retention of its own', async () => {
    // Aged events can only be made by the owner: the runtime role may not choose occurred_at.
    await asSuperuser(
      `INSERT INTO ${schema}.audit_events (occurred_at, type, actor)
       SELECT now() - make_interval(days => d), 'test.aged', 'aged-' || d FROM (VALUES (2), (29), (31), (365)) AS v(d)`,
    );
    const agedActors = async () =>
      (await runtimeClient.query<{ actor: string }>("SELECT actor FROM audit_events WHERE type = 'test.aged' ORDER BY occurred_at DESC")).rows.map((r) => r.actor);

    const ownRetention = await outcome(runtimeClient, 'SELECT prune_audit_events(1, 1000)');
    for (let i = 0; i < 5; i++) await runtimeClient.query('SELECT prune_audit_events(1000)');

    expect(ownRetention).toBe('42883'); // undefined_function: there is no such signature
    expect(await agedActors()).toEqual(['aged-2', 'aged-29']);
    const { rows } = await runtimeClient.query<{ runtime: boolean; stranger: boolean }>(
      `SELECT has_function_privilege($1, 'prune_audit_events(integer)', 'EXECUTE') AS runtime,
              has_function_privilege($2, 'prune_audit_events(integer)', 'EXECUTE') AS stranger`,
      [runtime.name, stranger],
    );
    expect(rows).toEqual([{ runtime: true, stranger: false }]);
  });

  it('when `npm run migrate` runs with MIGRATION_DATABASE_URL, then it migrates as the owner, and the runtime role can use but not own the tables', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/db/migrate-cli.ts'], {
      cwd: REPOSITORY_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', DATABASE_URL: urlFor(runtime, cliSchema), MIGRATION_DATABASE_URL: urlFor(owner, cliSchema) },
    });

    expect(stdout).toMatch(/^Applied 0001_create_users\.sql, .*0011_audit_events_insert_columns\.sql, 0012_runtime_role_per_deployment\.sql/);
    const { rows } = await runtimeClient.query<{ owner: string; insertType: boolean; insertTime: boolean; update: boolean }>(
      `SELECT pg_get_userbyid(relowner) AS owner,
              has_column_privilege($2, oid, 'type', 'INSERT') AS "insertType",
              has_column_privilege($2, oid, 'occurred_at', 'INSERT') AS "insertTime",
              has_table_privilege($2, oid, 'UPDATE') AS update
         FROM pg_class WHERE oid = $1::regclass`,
      [`${cliSchema}.audit_events`, runtime.name],
    );
    expect(rows).toEqual([{ owner: owner.name, insertType: true, insertTime: false, update: false }]);
  }, 60_000);

  it('when the service starts again as the runtime role alone (no MIGRATION_DATABASE_URL, nothing pending), then it starts and serves, and leaves the owner\'s retention as it was', async () => {
    const masterKey = t!.masterKey.toString('base64');
    await t!.close();
    t = undefined;
    t = await startTestApp({ DATABASE_URL: urlFor(runtime), MASTER_KEY: masterKey, AUDIT_RETENTION_DAYS: '1' });

    const key = await createApiKey(t, { role: 'viewer' });
    expect((await loginWithApiKey(t, key)).token_type).toBe('bearer');
    expect((await runtimeClient.query('SELECT days FROM audit_retention')).rows).toEqual([{ days: 30 }]);
    expect(t.logs()).toContain("AUDIT_RETENTION_DAYS is not applied: the role of DATABASE_URL may not change the audit retention, so the schema owner's 30 days stay in force");
  });
});
