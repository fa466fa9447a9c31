import type { Config } from '../config';
import type { Logger } from '../logger';
import { Database } from './database';
import { startEmbeddedPostgres } from './embedded';

/** The PostgreSQL at DATABASE_URL, or without it the embedded one kept in DATA_DIR. */
export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  const settings = {
    poolSize: config.databasePoolSize,
    connectionTimeoutMs: config.databaseConnectTimeout * 1000,
    statementTimeoutMs: config.databaseStatementTimeout * 1000,
    pooling: config.databasePooling,
  };
  if (config.databaseUrl) return new Database({ url: config.databaseUrl, ...settings }, logger);
  // One connection: PGlite runs one statement at a time anyway, and pglite-socket queues protocol
  // messages one by one, so two connections' Parse/Bind could interleave on its single session.
  const embedded = await startEmbeddedPostgres(config.dataDir, 3, logger);
  // Nothing pools in between: the embedded database keeps per-connection state whatever DATABASE_POOLING says.
  return new Database({ url: embedded.url, ...settings, pooling: 'session', poolSize: 1 }, logger, embedded.stop);
}
