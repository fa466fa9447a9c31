import { chooseTestDatabase } from './test-database';

/**
 * Chooses the database the suite runs on and hands its URL to the test files through the
 * environment (globalSetup runs in Jest's parent process; workers inherit process.env).
 */
export default async function globalSetup(): Promise<void> {
  const database = await chooseTestDatabase(process.env);
  if (database.broker) {
    delete process.env.TEST_DATABASE_URL;
    process.env.TEST_DATABASE_BROKER = database.broker;
  } else {
    process.env.TEST_DATABASE_URL = database.url;
  }
  (globalThis as { __testDatabase__?: typeof database }).__testDatabase__ = database;
  console.log(`\n[test setup] database: ${database.description}`);
}
