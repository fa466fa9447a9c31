import { z } from 'zod';
import { flag, type EnvOf } from './env-kit';

/** Usage counts per key (contract, "Verifying keys, usage, leaks and imports"). */
export const usageEnv = {
  USAGE_FLUSH_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(300)
    .default(5)
    .describe(
      'How often each instance adds the usage counts it summed in memory to the database, seconds (1 to 300), in one statement; a crash loses at most this window (a graceful stop flushes)',
    ),
  USAGE_RETENTION_DAYS: z.coerce.number().int().min(1).max(36500).default(400).describe('Usage counts older than this many days are deleted by the maintenance pass (1 to 36500)'),
  USAGE_COUNTING: flag('true').describe('`false` counts no usage (the usage route then answers only what was counted before; `last_used` is still written): for measuring what counting costs'),
};

export function usageSettings(e: EnvOf<typeof usageEnv>) {
  return { usage: { flushSeconds: e.USAGE_FLUSH_SECONDS, retentionDays: e.USAGE_RETENTION_DAYS, counting: e.USAGE_COUNTING === 'true' } };
}
