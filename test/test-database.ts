import { startPgliteBroker } from './pglite-broker';

export interface TestDatabase {
  /** A PostgreSQL server on which each test app gets a schema; empty when a broker serves. */
  url: string;
  /** A PGlite broker handing out one instance per test app (see pglite-broker.ts). */
  broker?: string;
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
  const broker = await startPgliteBroker();
  return {
    url: '',
    broker: broker.url,
    description: 'embedded PGlite, an instance per test app (TEST_DATABASE_URL unset, no Docker engine)',
    stop: broker.stop,
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
