import type { Config } from '../config';
import type { Logger } from '../logger';
import { Database } from './database';

/** The database the configuration names. */
export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  if (!config.databaseUrl) {
    throw new Error('DATABASE_URL is not set: point it at a PostgreSQL database (see .env.example)');
  }
  return new Database({ url: config.databaseUrl, poolSize: config.databasePoolSize }, logger);
}
