import { z } from 'zod';
import type { EnvOf } from './env-kit';

/** What the service imposes on every key's policy (contract, "Key policies"). */
export const keyPoliciesEnv = {
  KEY_MAX_LIFETIME_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(36500)
    .optional()
    .describe(
      'Longest lifetime of a key, 1 to 36500 days (unset: none). A create without `expires_at` gets now + this many days; a policy PUT must give an `expires_at` within it. Keys that exist are left as they are, and regen keeps the expiry',
    ),
};

export function keyPoliciesSettings(e: EnvOf<typeof keyPoliciesEnv>) {
  return { keyMaxLifetimeDays: e.KEY_MAX_LIFETIME_DAYS };
}
