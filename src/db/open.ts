import type { Config } from '../config';
import type { Logger } from '../logger';
import { Database, type Queryable } from './database';
import { embeddedDatabaseExists, startEmbeddedPostgres } from './embedded';
import { migrate } from './migrate';

const settingsOf = (config: Config) => ({
  poolSize: config.databasePoolSize,
  connectionTimeoutMs: config.databaseConnectTimeout * 1000,
  statementTimeoutMs: config.databaseStatementTimeout * 1000,
  pooling: config.databasePooling,
});

/** The PostgreSQL at DATABASE_URL, or without it the embedded one kept in DATA_DIR. */
export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  const settings = settingsOf(config);
  if (config.databaseUrl) return new Database({ url: config.databaseUrl, ...settings }, logger);
  // One connection: PGlite runs one statement at a time anyway, and pglite-socket queues protocol
  // messages one by one, so two connections' Parse/Bind could interleave on its single session.
  const embedded = await startEmbeddedPostgres(config.dataDir, 3, logger);
  // Nothing pools in between: the embedded database keeps per-connection state whatever DATABASE_POOLING says.
  return new Database({ url: embedded.url, ...settings, pooling: 'session', poolSize: 1 }, logger, embedded.stop);
}

/** Whether opening will create the database, so that it is certainly empty: the embedded one's first start. */
export function willCreateDatabase(config: Config): boolean {
  return !config.databaseUrl && !embeddedDatabaseExists(config.dataDir);
}

/**
 * Applies pending migrations over MIGRATION_DATABASE_URL when set (a role that owns the schema, on
 * a connection of its own, closed afterwards), otherwise over `db`, the service's own connection;
 * then runs `asOwner`, if given, on that same connection: what only the schema owner may write.
 */
export async function migrateDatabase(
  config: Config,
  db: Database,
  logger: Logger,
  asOwner?: (owner: Queryable) => Promise<void>,
): Promise<string[]> {
  if (!config.migrationDatabaseUrl) {
    const applied = await migrate(db, logger, undefined, config.runtimeRole);
    await asOwner?.(db);
    return applied;
  }
  const owner = new Database({ url: config.migrationDatabaseUrl, ...settingsOf(config), poolSize: 1 }, logger);
  try {
    const applied = await migrate(owner, logger, undefined, config.runtimeRole);
    await asOwner?.(owner);
    return applied;
  } finally {
    await owner.close();
  }
}
