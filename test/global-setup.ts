import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chooseTestDatabase } from './test-database';
import { redisReachable } from './helpers/redis';

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
  // Where the test files record why they skip (test/helpers/skips.ts); test/skip-reporter.cjs reads it at the end.
  process.env.TEST_SKIPS_FILE = path.join(mkdtempSync(path.join(tmpdir(), 'jest-skips-')), 'skips.jsonl');
  // Asked once here, so a file can choose describe or describe.skip before its tests are defined.
  process.env.TEST_REDIS_REACHABLE = String(await redisReachable());
  console.log(`\n[test setup] database: ${database.description}`);
}
