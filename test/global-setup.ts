import { Client } from 'pg';

/**
 * Chooses the PostgreSQL the suite runs on and hands its URL to the test files through
 * process.env (globalSetup runs in the parent process; workers inherit its environment).
 */
export default async function globalSetup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    throw new Error('TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)');
  }
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query('SELECT 1');
  await client.end();
  process.env.TEST_DATABASE_URL = url;
  console.log(`\n[test setup] database: PostgreSQL at ${new URL(url).host} (TEST_DATABASE_URL)`);
}
