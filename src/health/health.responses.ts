import { z } from 'zod';

/** What /healthz and /readyz answer when all is well. */
export const healthStatus = z.strictObject({ status: z.literal('ok') });

/** What /readyz answers while the database answers; `redis` only when REDIS_URL holds the rate-limit counters. */
export const readinessStatus = z.strictObject({
  status: z.literal('ok'),
  /** down: the limits pass every request until Redis returns (the service stays ready). */
  redis: z.enum(['up', 'down']).optional(),
});
