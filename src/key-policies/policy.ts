import { AllowedAddresses } from './addresses';

/** Unix time in seconds (fractional), the one source of "now" for the policy checks, so tests can move it. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now() / 1000;

export const REFILL_INTERVALS = ['day', 'month'] as const;
export type RefillInterval = (typeof REFILL_INTERVALS)[number];

/**
 * `last_used` of a key verified without credits is written at most about this often (seconds), in
 * batches (usage/usage-recorder.ts): the idle rule counts in days, and the key's record says when it
 * was last used to within a minute.
 */
export const LAST_USED_WINDOW_SECONDS = 60;

/**
 * How long past its deadline a key must be before the idle rule turns it off: a use not yet in
 * `last_used` is no idleness, and a key verified VALID must not be found idle a moment later. A
 * verification's stamp waits for the first usage flush after LAST_USED_WINDOW_SECONDS, and a flush
 * comes every USAGE_FLUSH_SECONDS (at most 300): at most 600 s in all. Used by the check in memory
 * and by the SQL.
 */
export const IDLE_SLACK_SECONDS = 600;

export const DISABLED_REASONS = ['manual', 'idle', 'leaked', 'holder'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** At most `limit` authentications per fixed window of `windowSeconds`, aligned to the Unix epoch. */
export interface RateLimitRule {
  limit: number;
  windowSeconds: number;
}

/**
 * A key's policy as the checks read it (from the key's row, see policyColumns). Credits are not
 * here: they are a counter, judged and spent only in the database (see credits.ts).
 */
export interface KeyPolicy {
  /** Bumped by every change of what these fields say: a login judged against this copy is confirmed by its write. */
  version: number;
  enabled: boolean;
  /** Unix seconds; null: never. */
  expiresAt: number | null;
  /** Whether the key's api_key.expired event was written. */
  expiryRecorded: boolean;
  addresses: AllowedAddresses;
  permissions: readonly string[];
  rateLimit: RateLimitRule | null;
  /** Whether the key has credits (spent in the database by every successful authentication), and how they refill; null: none. */
  credits: { refill: RefillInterval | null } | null;
  /** The idle rule: off after `maxDays` without use, counted from `since` (Unix seconds); null: none. */
  idle: { maxDays: number; since: number } | null;
}

/** A key without a policy, as a key created before policies was: for tests and defaults. */
export const OPEN_POLICY: KeyPolicy = Object.freeze({
  version: 1,
  enabled: true,
  expiresAt: null,
  expiryRecorded: false,
  addresses: AllowedAddresses.ANYWHERE,
  permissions: [],
  rateLimit: null,
  credits: null,
  idle: null,
});

/** Seconds from `now` to the next refill of credits (00:00 UTC tomorrow, or the 1st of next month at 00:00 UTC). */
export function secondsToRefill(interval: RefillInterval, now: number): number {
  const at = new Date(Math.floor(now) * 1000);
  const next =
    interval === 'day'
      ? Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1)
      : Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil(next / 1000 - now));
}
