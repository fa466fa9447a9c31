import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { REPOSITORY_ROOT } from '../../../scripts/harness/node-process';
import { startTestApp, type TestApp } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { createApiKey, loginWithApiKey } from '../../helpers/factories';

const DEPLOYMENT_SQL = path.join(REPOSITORY_ROOT, 'deploy/postgres/deployment.sql');

/** The test server's URL with another user, password and database. */
function urlFor(user: string, password: string, database: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.username = user;
  url.password = password;
  url.pathname = `/${database}`;
  url.search = '';
  return url.toString();
}

/** Runs `sql` as the test server's superuser in `database`. */
async function asSuperuser<T extends object>(database: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const server = new URL(process.env.TEST_DATABASE_URL!);
  const client = new Client({ connectionString: urlFor(decodeURIComponent(server.username), decodeURIComponent(server.password), database) });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** The SQLSTATE a login and one query fail with, or 'ok'. */
async function loginOutcome(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
    await client.query('SELECT count(*) FROM users');
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

interface Deployment {
  name: string;
  owner: { user: string; password: string };
  runtime: { user: string; password: string };
}

/** A deployment made by the shipped script, exactly as the docs tell an operator to run it. */
async function createDeployment(name: string): Promise<Deployment> {
  const deployment = {
    name,
    owner: { user: `${name}_owner`, password: randomBytes(12).toString('hex') },
    runtime: { user: `${name}_runtime`, password: randomBytes(12).toString('hex') },
  };
  const server = new URL(process.env.TEST_DATABASE_URL!);
  await promisify(execFile)(
    'psql',
    ['-v', 'ON_ERROR_STOP=1', '-v', `deployment=${name}`, '-v', `owner_password=${deployment.owner.password}`, '-v', `runtime_password=${deployment.runtime.password}`, '-f', DEPLOYMENT_SQL],
    { env: { ...process.env, PGHOST: server.hostname, PGPORT: server.port || '5432', PGUSER: decodeURIComponent(server.username), PGPASSWORD: decodeURIComponent(server.password), PGDATABASE: 'postgres' } },
  );
  return deployment;
}

const INSUFFICIENT_PRIVILEGE = '42501';

onSharedServerOnly()('two deployments on one PostgreSQL server (Hardening, round two)', () => {
  const suffix = randomBytes(4).toString('hex');
  let a: Deployment;
  let b: Deployment;
  const apps: TestApp[] = [];

  const start = async (d: Deployment) => {
    const app = await startTestApp({
      DATABASE_URL: urlFor(d.runtime.user, d.runtime.password, d.name),
      MIGRATION_DATABASE_URL: urlFor(d.owner.user, d.owner.password, d.name),
    });
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    // The fixed name of old: a role of that name may exist on a shared server (made by an older deployment).
    await asSuperuser('postgres', `DO $$ BEGIN CREATE ROLE apikeys_runtime NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`);
    a = await createDeployment(`apk_a_${suffix}`);
    b = await createDeployment(`apk_b_${suffix}`);
  }, 60_000);
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const d of [a, b].filter(Boolean)) {
      await asSuperuser('postgres', `DROP DATABASE IF EXISTS ${d.name} WITH (FORCE)`);
      await asSuperuser('postgres', `DROP ROLE IF EXISTS ${d.runtime.user}`);
      await asSuperuser('postgres', `DROP ROLE IF EXISTS ${d.owner.user}`);
    }
  });

  it('when each deployment migrates as its owner and runs as its runtime role, then each works, and neither runtime login gets into the other database', async () => {
    for (const d of [a, b]) {
      const app = await start(d);
      const key = await createApiKey(app, { role: 'viewer' });
      expect((await loginWithApiKey(app, key)).token_type).toBe('bearer');
    }

    expect(await loginOutcome(urlFor(a.runtime.user, a.runtime.password, a.name))).toBe('ok');
    expect(await loginOutcome(urlFor(a.runtime.user, a.runtime.password, b.name))).toBe(INSUFFICIENT_PRIVILEGE);
    expect(await loginOutcome(urlFor(b.runtime.user, b.runtime.password, a.name))).toBe(INSUFFICIENT_PRIVILEGE);
    expect(await loginOutcome(urlFor(a.owner.user, a.owner.password, b.name))).toBe(INSUFFICIENT_PRIVILEGE);
  });

  it('when a role of the old fixed name exists on the server, then neither deployment granted it anything, and each runtime role holds grants on its own tables only', async () => {
    const privileges = await asSuperuser<{ role: string; users: boolean; usage: boolean }>(
      b.name,
      `SELECT r AS role, has_table_privilege(r, 'public.users', 'SELECT') AS users, has_schema_privilege(r, 'public', 'USAGE') AS usage
         FROM unnest($1::text[]) AS r`,
      [['apikeys_runtime', a.runtime.user, b.runtime.user]],
    );

    expect(privileges).toEqual([
      { role: 'apikeys_runtime', users: false, usage: false },
      { role: a.runtime.user, users: false, usage: false },
      { role: b.runtime.user, users: true, usage: true },
    ]);
  });
});
