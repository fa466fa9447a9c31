import { randomBytes } from 'node:crypto';
import { SERVICE_FROM_SOURCE, startNodeProcess, type NodeProcess } from '../../../scripts/harness/node-process';
import { createTestDatabase, testPoolSize, type TestDatabase } from '../../helpers/database';

export interface ServerProcess extends NodeProcess {
  /** DATABASE_URL and MASTER_KEY it runs with; pass as `joinDatabaseOf` to start a second instance. */
  database: Record<string, string>;
  /** Kills the process if still running and drops the database it created. */
  cleanup: () => Promise<void>;
}

/**
 * The real service as its own OS process (src/main.ts through tsx), on a fresh schema of the test
 * database, listening on a free loopback port. Resolves once /readyz answers 200.
 */
export async function startServerProcess(
  env: Record<string, string> = {},
  options: {
    /** Run with no DATABASE_URL and no MASTER_KEY: the embedded PGlite and generated key in this folder. */
    embeddedDataDir?: string;
    /** Share the database and MASTER_KEY of a running instance. */
    joinDatabaseOf?: ServerProcess;
    /** Connect through this database (e.g. behind a TcpProxy); the caller creates and drops it. */
    database?: TestDatabase;
    /** 30 s unless given: a new embedded database on a loaded machine may take longer. */
    readyWithinMs?: number;
  } = {},
): Promise<ServerProcess> {
  const owned = !options.embeddedDataDir && !options.joinDatabaseOf && !options.database ? await createTestDatabase() : undefined;
  const given = owned ?? options.database;
  const database: Record<string, string> = options.joinDatabaseOf?.database ??
    (given ? { DATABASE_URL: given.url, MASTER_KEY: randomBytes(32).toString('base64') } : { DATA_DIR: options.embeddedDataDir ?? '' });

  const server = await startNodeProcess({
    label: 'the service',
    ...SERVICE_FROM_SOURCE,
    env: {
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      BCRYPT_COST: '4',
      LOG_LEVEL: 'warn',
      // As in startTestApp: tests that are about rate limits turn them on.
      RATE_LIMIT_ENABLED: 'false',
      DATABASE_POOL_SIZE: String(testPoolSize(10)),
      ...database,
      ...env,
    },
    readyPath: '/readyz',
    readyWithinMs: options.readyWithinMs,
  }).catch(async (err: unknown) => {
    await owned?.drop();
    throw err;
  });

  return {
    ...server,
    database,
    async cleanup() {
      await server.kill();
      await owned?.drop();
    },
  };
}
