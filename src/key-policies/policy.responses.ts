import { z } from 'zod';
import { envelopeOf } from '../shared/envelope';
import { DISABLED_REASONS, REFILL_INTERVALS } from './policy';
import { PERMISSION_PATTERN } from './policy.schemas';

const unixSeconds = z.int().min(0);

/** A key's policy as GET and PUT .../policy answer it; the source of the OpenAPI response schema. */
export const keyPolicy = z.strictObject({
  expires_at: unixSeconds.nullable().meta({ description: 'Unix seconds from which the key no longer works; null: never.' }),
  enabled: z.boolean().meta({ description: 'false: the key is off (see disabled_reason).' }),
  allowed_addresses: z.array(z.string()).max(100).meta({ description: 'Addresses and CIDR ranges the key may be used from, as given; empty: anywhere.' }),
  permissions: z.array(z.string().regex(PERMISSION_PATTERN)).max(50).meta({ description: "Names for the owner's own APIs, carried in the key's tokens' scope." }),
  rate_limit: z
    .strictObject({ limit: z.int().min(1).max(1_000_000), window_seconds: z.int().min(1).max(86_400) })
    .nullable()
    .meta({ description: 'At most limit authentications per window of window_seconds aligned to the Unix epoch; null: none.' }),
  credits: z
    .strictObject({
      remaining: z.int().min(0).max(1_000_000_000_000),
      refill: z.strictObject({ amount: z.int().min(1).max(1_000_000_000_000), interval: z.enum(REFILL_INTERVALS) }).nullable(),
    })
    .nullable()
    .meta({ description: 'Uses left (after any refill due by now) and how they come back; null: no limit.' }),
  max_idle_days: z.int().min(1).max(3650).nullable().meta({ description: 'Days without use after which the key turns off; null: never.' }),
  created_at: unixSeconds.meta({ readOnly: true, description: 'Unix seconds at which the key was created.' }),
  last_used: unixSeconds.nullable().meta({ readOnly: true, description: 'Unix seconds of the last successful authentication or verification; null: never.' }),
  disabled_reason: z
    .enum(DISABLED_REASONS)
    .nullable()
    .meta({ readOnly: true, description: 'Why the key is off: manual, idle, leaked or holder; null while it is on.' }),
});

export const keyPolicyEnvelope = envelopeOf(keyPolicy);

export type KeyPolicyRecord = z.output<typeof keyPolicy>;
