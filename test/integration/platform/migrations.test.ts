import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Database } from '../../../src/db/database';
import { migrate, MIGRATIONS_DIR } from '../../../src/db/migrate';
import { createLogger } from '../../../src/logger';
import { tablesOfCurrentSchema } from './db-dump';
import { createTestDatabase, itOnSharedServerOnly } from '../../helpers/database';
import { readdirSync } from 'node:fs';

const logger = createLogger('silent');
const shippedMigrations = readdirSync(MIGRATIONS_DIR)
  .filter((f) => /^\d{4}_.+\.sql$/.test(f))
  .sort();

describe('migrations', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function openFresh(count = 1): Promise<Database[]> {
    const { url, drop } = await createTestDatabase();
    const dbs = Array.from({ length: count }, () => new Database({ url, poolSize: 2 }, logger));
    cleanups.push(async () => {
      for (const db of dbs) await db.close();
      await drop();
    });
    return dbs;
  }

  it('when migrate() runs on an empty schema, then every shipped migration is applied in order and the tables exist', async () => {
    const [db] = await openFresh();

    const applied = await migrate(db!, logger);

    expect(shippedMigrations.length).toBeGreaterThan(0);
    expect(applied).toEqual(shippedMigrations);
    expect(await tablesOfCurrentSchema(db!)).toEqual(
      expect.arrayContaining(['api_keys', 'request_token_jtis', 'schema_migrations', 'sessions', 'signing_keys', 'users']),
    );
  });

  it('when migrate() runs a second time, then it applies nothing and the record is unchanged', async () => {
    const [db] = await openFresh();
    await migrate(db!, logger);
    const before = (await db!.query('SELECT name, applied_at FROM schema_migrations ORDER BY name')).rows;

    const applied = await migrate(db!, logger);

    expect(applied).toEqual([]);
    expect((await db!.query('SELECT name, applied_at FROM schema_migrations ORDER BY name')).rows).toEqual(before);
  });

  itOnSharedServerOnly()('when two instances migrate one fresh schema at the same time, then both succeed and each migration is recorded once', async () => {
    const [a, b] = await openFresh(2);

    const [appliedA, appliedB] = await Promise.all([migrate(a!, logger), migrate(b!, logger)]);

    expect([...appliedA, ...appliedB].sort()).toEqual(shippedMigrations);
    const { rows } = await a!.query<{ name: string; n: string }>(
      'SELECT name, count(*)::text AS n FROM schema_migrations GROUP BY name ORDER BY name',
    );
    expect(rows).toEqual(shippedMigrations.map((name) => ({ name, n: '1' })));
  });

  itOnSharedServerOnly()('when five instances migrate one fresh schema at the same time, then all succeed and nothing is applied twice', async () => {
    const dbs = await openFresh(5);

    const results = await Promise.all(dbs.map((db) => migrate(db, logger)));

    expect(results.flat().sort()).toEqual(shippedMigrations);
    const { rows } = await dbs[0]!.query<{ n: string }>('SELECT count(*)::text AS n FROM schema_migrations');
    expect(rows[0]!.n).toBe(String(shippedMigrations.length));
  });

  it('when a migration fails, then migrate() rejects and leaves neither its changes nor its record behind', async () => {
    const [db] = await openFresh();
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(path.join(dir, '0001_create_things.sql'), 'CREATE TABLE things (id int PRIMARY KEY);');
    await writeFile(path.join(dir, '0002_broken.sql'), 'ALTER TABLE things ADD COLUMN oops no_such_type;');

    await expect(migrate(db!, logger, dir)).rejects.toThrow();

    const tables = await tablesOfCurrentSchema(db!);
    expect(tables).not.toContain('things');
    const recorded = tables.includes('schema_migrations')
      ? (await db!.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name)
      : [];
    expect(recorded).not.toContain('0002_broken.sql');
    expect(recorded.includes('0001_create_things.sql')).toBe(tables.includes('things'));
  });

  it('when a broken migration is fixed, then the next migrate() applies what is pending', async () => {
    const [db] = await openFresh();
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(path.join(dir, '0001_create_things.sql'), 'CREATE TABLE things (id int PRIMARY KEY);');
    await writeFile(path.join(dir, '0002_add_name.sql'), 'ALTER TABLE things ADD COLUMN name no_such_type;');
    await migrate(db!, logger, dir).catch(() => undefined);
    await writeFile(path.join(dir, '0002_add_name.sql'), 'ALTER TABLE things ADD COLUMN name text;');

    const applied = await migrate(db!, logger, dir);

    expect(applied).toContain('0002_add_name.sql');
    const { rows } = await db!.query('SELECT name FROM schema_migrations ORDER BY name');
    expect(rows).toEqual([{ name: '0001_create_things.sql' }, { name: '0002_add_name.sql' }]);
    await expect(db!.query("INSERT INTO things (id, name) VALUES (1, 'x')")).resolves.toBeDefined();
  });
});
