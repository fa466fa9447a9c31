import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestDatabase {
  url: string;
  /** One line for the test log: which database was chosen and why. */
  description: string;
  stop: () => Promise<void>;
}

async function dockerIsAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

async function startContainer(): Promise<TestDatabase> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:16-alpine').start();
  return {
    url: container.getConnectionUri(),
    description: 'throwaway PostgreSQL 16 container (Testcontainers; TEST_DATABASE_URL unset, Docker found)',
    stop: async () => {
      await container.stop();
    },
  };
}

async function startPglite(): Promise<TestDatabase> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const dir = await mkdtemp(path.join(tmpdir(), 'apikeys-test-pglite-'));
  const db = await PGlite.create(dir);
  // Every test file opens its own pool; the socket server refuses connections past this bound.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 100 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    description: 'embedded PGlite (TEST_DATABASE_URL unset, no Docker engine)',
    stop: async () => {
      await server.stop();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** TEST_DATABASE_URL when set; else a Testcontainers PostgreSQL when Docker runs; else PGlite. */
export async function chooseTestDatabase(env: NodeJS.ProcessEnv): Promise<TestDatabase> {
  if (env.TEST_DATABASE_URL) {
    return {
      url: env.TEST_DATABASE_URL,
      description: `PostgreSQL at ${new URL(env.TEST_DATABASE_URL).host} (TEST_DATABASE_URL)`,
      stop: async () => undefined,
    };
  }
  return (await dockerIsAvailable()) ? startContainer() : startPglite();
}
