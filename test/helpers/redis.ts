import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';

/** The Redis the tests share: TEST_REDIS_URL, else the local one CI starts. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisReachable(): Promise<boolean> {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 1_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    await client.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the tests that need Redis can run: under CI=true an unreachable Redis is a failure (CI
 * starts one); elsewhere the caller skips, and says so.
 */
export async function redisForTests(): Promise<boolean> {
  const reachable = await redisReachable();
  if (!reachable && process.env.CI) throw new Error(`Redis is not reachable at ${REDIS_URL}`);
  return reachable;
}

/** True, after saying so, when a test that needs Redis must skip: `reachable` is redisForTests()'s answer. */
export function skipsWithoutRedis(reachable: boolean): boolean {
  if (!reachable) console.warn(`skipped: Redis is not reachable at ${REDIS_URL}`);
  return !reachable;
}

/** The settings that put an instance's rate-limit counters in Redis, under a prefix of this run's own. */
export const sharedCounters = (label: string) => ({
  REDIS_URL,
  RATE_LIMIT_REDIS_PREFIX: `${label}:${randomBytes(4).toString('hex')}:`,
});
