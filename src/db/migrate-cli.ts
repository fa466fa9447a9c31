import { config as loadDotenv } from 'dotenv';
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../logger';
import { migrateDatabase, openDatabase } from './open';

/** `npm run migrate`: applies pending migrations (over MIGRATION_DATABASE_URL when set) and exits. */
async function run(): Promise<void> {
  loadDotenv({ quiet: true });
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const db = await openDatabase(config, logger);
  try {
    const applied = await migrateDatabase(config, db, logger);
    console.log(applied.length ? `Applied ${applied.join(', ')}` : 'Database is up to date');
  } finally {
    await db.close();
  }
}

run().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : `Migration failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
