import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import type { SkipReason } from './skips';

/** The Redis the tests share: TEST_REDIS_URL, else the local one CI starts. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether the shared Redis answers PING; the global setup asks once and tells the files (TEST_REDIS_REACHABLE). */
export async function redisReachable(): Promise<boolean> {
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
 * Why the tests that need the shared Redis must skip, when the global setup found none there; else
 * undefined. Under CI=true (CI starts one) an unreachable Redis fails the file instead.
 */
export function redisMissing(what: string): SkipReason | undefined {
  if (process.env.TEST_REDIS_REACHABLE !== 'false') return undefined;
  const why = `no Redis answers at ${REDIS_URL}: install redis-server and start it (redis-server --daemonize yes), or set TEST_REDIS_URL`;
  if (process.env.CI === 'true') throw new Error(`CI=true does not allow skipping ${what}: ${why}`);
  return { what, why };
}

/** The settings that put an instance's rate-limit counters in Redis, under a prefix of this run's own. */
export const sharedCounters = (label: string) => ({
  REDIS_URL,
  RATE_LIMIT_REDIS_PREFIX: `${label}:${randomBytes(4).toString('hex')}:`,
});
