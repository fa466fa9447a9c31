import { z } from 'zod';
import type { EnvOf } from './env-kit';

/** The Redis that counters shared by every instance live in. */
export const redisEnv = {
  REDIS_URL: z
    .string()
    .url()
    .optional()
    .describe("Keep rate-limit counters (the service's limits and the keys' own) in Redis, shared by every instance; unset: in each process's memory"),
  REDIS_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(10_000)
    .default(300)
    .describe('Milliseconds one Redis command may take, 10 to 10,000, sent or not; past it Redis counts as down and requests pass as if limits were off'),
};

export function redisSettings(e: EnvOf<typeof redisEnv>) {
  return { redis: Object.freeze({ url: e.REDIS_URL, timeoutMs: e.REDIS_TIMEOUT_MS }) };
}
