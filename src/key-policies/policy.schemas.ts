import { z } from 'zod';
import { parseAllowedEntry } from './addresses';
import { DISABLED_REASONS, REFILL_INTERVALS } from './policy';

/** A whole number from `min` to `max`, with one message naming both. */
const wholeNumber = (min: number, max: number) => {
  const rule = `must be a whole number from ${min} to ${max}`;
  return z.int({ error: (issue) => (issue.input === undefined ? 'is required' : rule) }).min(min, rule).max(max, rule);
};

/** Unix seconds up to the year 9999: far enough for any expiry, small enough for any date library. */
const MAX_UNIX_SECONDS = 253_402_300_799;
const unixSeconds = wholeNumber(0, MAX_UNIX_SECONDS);

export const MAX_ALLOWED_ADDRESSES = 100;
export const MAX_PERMISSIONS = 50;
export const PERMISSION_PATTERN = /^[a-z0-9][a-z0-9:._-]{0,63}$/;
const PERMISSION_RULE = 'must be 1 to 64 characters of a-z 0-9 : . _ -, starting with a letter or digit';

const allowedAddresses = z
  .array(z.string({ error: 'must be an IPv4 or IPv6 address or CIDR range' }), { error: 'must be an array of addresses and CIDR ranges' })
  .max(MAX_ALLOWED_ADDRESSES, `must hold at most ${MAX_ALLOWED_ADDRESSES} entries`)
  .superRefine((entries, ctx) => {
    entries.forEach((entry, i) => {
      const parsed = parseAllowedEntry(entry);
      if ('problem' in parsed) ctx.addIssue({ code: 'custom', path: [i], message: `"${entry.slice(0, 64)}" ${parsed.problem}` });
    });
  });

const permission = z
  .string({ error: PERMISSION_RULE })
  .regex(PERMISSION_PATTERN, PERMISSION_RULE)
  .refine((name) => name !== 'openid' && !name.startsWith('api-keys:'), 'openid and the api-keys: scopes come from the role, not from permissions');

const permissions = z
  .array(permission, { error: 'must be an array of permission names' })
  .max(MAX_PERMISSIONS, `must hold at most ${MAX_PERMISSIONS} names`)
  .refine((names) => new Set(names).size === names.length, 'must not name a permission twice');

const rateLimit = z.strictObject(
  {
    /** Authentications allowed per window, 1 to 1000000. */
    limit: wholeNumber(1, 1_000_000),
    /** The window, 1 to 86400 seconds, aligned to the Unix epoch. */
    window_seconds: wholeNumber(1, 86_400),
  },
  { error: 'must be null or an object with limit and window_seconds' },
);

const refill = z.strictObject(
  {
    /** What `remaining` is set back to at each refill, 1 to 1000000000000. */
    amount: wholeNumber(1, 1_000_000_000_000),
    /** `day`: at 00:00 UTC each day; `month`: at 00:00 UTC on the 1st of each month. */
    interval: z.enum(REFILL_INTERVALS, { error: `must be one of ${REFILL_INTERVALS.join(', ')}` }),
  },
  { error: 'must be null or an object with amount and interval' },
);

const credits = z.strictObject(
  {
    /** Uses left, 0 to 1000000000000; each successful authentication costs 1. */
    remaining: wholeNumber(0, 1_000_000_000_000),
    /** How the credits come back; null or omitted: never. */
    refill: refill.nullable().default(null),
  },
  { error: 'must be null or an object with remaining and refill' },
);

/** The fields a policy's owner sets; on create and PUT alike. */
const settable = {
  /** Unix seconds at which the key stops working, in the future; null: never. Required (not null) when KEY_MAX_LIFETIME_DAYS is set, except on create. */
  expires_at: unixSeconds.nullable().optional(),
  /** false turns the key off until it is turned on again. */
  enabled: z.boolean({ error: 'must be true or false' }).default(true),
  /** Up to 100 IPv4 or IPv6 addresses or CIDR ranges the key may be used from; empty: anywhere. */
  allowed_addresses: allowedAddresses.default([]),
  /** Up to 50 distinct names for the owner's own APIs, carried in the key's tokens' scope. */
  permissions: permissions.default([]),
  /** At most `limit` authentications per window; null: no limit. */
  rate_limit: rateLimit.nullable().default(null),
  /** Uses left and their refill; null: no limit. */
  credits: credits.nullable().default(null),
  /** The key turns off after this many days (1 to 3650) without use; null: never. */
  max_idle_days: wholeNumber(1, 3650).nullable().default(null),
};

/** The policy given with a create: the settable fields only. */
export const createPolicyBody = z.strictObject(settable, { error: 'must be an object' });

/** PUT .../policy replaces: an omitted field takes its default. The read-only fields pass only when equal to the stored values. */
export const putPolicyBody = z.strictObject(
  {
    ...settable,
    /** Read-only: accepted only when equal to the stored value. */
    created_at: unixSeconds.optional(),
    /** Read-only: accepted only when equal to the stored value. */
    last_used: unixSeconds.nullable().optional(),
    /** Read-only: accepted only when equal to the stored value. */
    disabled_reason: z.enum(DISABLED_REASONS, { error: `must be null or one of ${DISABLED_REASONS.join(', ')}` }).nullable().optional(),
  },
  { error: 'a JSON object is required' },
);

export type PolicyInput = z.output<typeof createPolicyBody>;
export type PutPolicyInput = z.output<typeof putPolicyBody>;
