import { config as loadDotenv } from 'dotenv';
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../logger';
import { openDatabase } from './open';
import { migrate } from './migrate';

/** `npm run migrate`: applies pending migrations and exits. */
async function run(): Promise<void> {
  loadDotenv({ quiet: true });
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const db = await openDatabase(config, logger);
  try {
    const applied = await migrate(db, logger);
    console.log(applied.length ? `Applied ${applied.join(', ')}` : 'Database is up to date');
  } finally {
    await db.close();
  }
}

run().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : `Migration failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
