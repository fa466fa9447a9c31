import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { describeUnless, itUnless, type SkipReason } from './skips';

export interface TestDatabase {
  /** Connect here: a fresh PGlite instance, or the test server with `?options=-c search_path=<schema>`. */
  url: string;
  drop: () => Promise<void>;
}

/**
 * A database of its own for one test app. On a PostgreSQL server, a fresh schema (connections
 * select it through the URL's options). On PGlite, whose connections all share one session, a
 * fresh PGlite instance from the broker the global setup runs.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const broker = process.env.TEST_DATABASE_BROKER;
  if (broker) {
    const res = await fetch(`${broker}/databases`, { method: 'POST' });
    if (!res.ok) throw new Error(`PGlite broker: ${res.status} ${await res.text()}`);
    const { id, url } = (await res.json()) as { id: string; url: string };
    return {
      url,
      drop: async () => {
        await fetch(`${broker}/databases/${id}`, { method: 'DELETE' });
      },
    };
  }
  const server = process.env.TEST_DATABASE_URL;
  if (!server) throw new Error('Neither TEST_DATABASE_BROKER nor TEST_DATABASE_URL is set; the Jest global setup chooses one');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await runOnServer(server, `CREATE SCHEMA ${schema}`);
  const url = new URL(server);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => runOnServer(server, `DROP SCHEMA ${schema} CASCADE`) };
}

async function runOnServer(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** PGlite instance from the broker: its connections share one session (see onSharedServerOnly). */
export const onPglite = () => process.env.TEST_DATABASE_BROKER !== undefined;

/**
 * One connection per pool on PGlite: pglite-socket queues protocol messages one by one, so
 * concurrent statements from two connections can interleave their Parse and Bind.
 */
export const testPoolSize = (serverPoolSize: number) => (onPglite() ? 1 : serverPoolSize);

/**
 * For tests of several instances (or migrators) sharing one database. On PGlite they are skipped:
 * one PGlite belongs to one process (the service locks its data folder), and connections of
 * different processes would share its single session, a deployment that cannot exist.
 */
export const onSharedServerOnly = (): jest.Describe => describeUnless(onPglite() && SEVERAL_INSTANCES);
export const itOnSharedServerOnly = (): jest.It => itUnless(onPglite() && SEVERAL_INSTANCES);

/** How to run what PGlite cannot: on a PostgreSQL server. */
const ON_A_SERVER = 'set TEST_DATABASE_URL to a PostgreSQL server (e.g. postgres://postgres@127.0.0.1:5432/test), or run a Docker engine for a throwaway one';

const SEVERAL_INSTANCES: SkipReason = {
  what: 'the tests of several service instances (or migrators) sharing one database',
  why: `the embedded PGlite belongs to one process; ${ON_A_SERVER}`,
};

/**
 * For a test that holds a lock on one connection while another waits for it: PGlite's connections
 * share one session and run one statement at a time, so the second could never wait on the first.
 */
export const itWithConcurrentConnections = (): jest.It =>
  itUnless(onPglite() && { what: 'the tests of one connection waiting on another\'s lock', why: `PGlite runs one statement at a time for every connection; ${ON_A_SERVER}` });
