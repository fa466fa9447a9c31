/**
 * Run by pglite-template.test.ts in a process of its own (PGlite's WebAssembly does not load inside
 * Jest's module sandbox): `make <templateDir> <migrationsDir>` makes a template there and prints its
 * size (null when it was up to date); `first-start <templateDir> <migrationsDir> <dataDir>` starts
 * the embedded database on a new data folder from that template, migrates it, and prints what the
 * migrator applied, what schema_migrations lists and the log lines.
 */
import { Writable } from 'node:stream';
import { Database } from '../../../src/db/database';
import { startEmbeddedPostgres } from '../../../src/db/embedded';
import { migrate } from '../../../src/db/migrate';
import { makePgliteTemplate } from '../../../src/db/pglite-template-maker';
import { createLogger } from '../../../src/logger';
import { parseLogLines } from './log-lines';

async function firstStart(dir: string, migrations: string, dataDir: string) {
  let raw = '';
  const logger = createLogger('info', new Writable({ write: (chunk, _encoding, done) => ((raw += String(chunk)), done()) }));
  const embedded = await startEmbeddedPostgres(dataDir, 1, logger, { dir, migrations });
  const db = new Database({ url: embedded.url, poolSize: 1 }, logger, embedded.stop);
  try {
    const applied = await migrate(db, logger, migrations);
    const recorded = (await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')).rows.map((r) => r.name);
    return { applied, recorded, messages: parseLogLines(raw).map((line) => String(line.msg)) };
  } finally {
    await db.close();
  }
}

async function main(): Promise<unknown> {
  const [command, dir, migrations, dataDir] = process.argv.slice(2);
  if (command === 'make' && dir && migrations) return (await makePgliteTemplate({ dir, migrations })) ?? null;
  if (command === 'first-start' && dir && migrations && dataDir) return firstStart(dir, migrations, dataDir);
  throw new Error('usage: make <templateDir> <migrationsDir> | first-start <templateDir> <migrationsDir> <dataDir>');
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
