import type { ClientAddress } from './addresses';
import { IDLE_SLACK_SECONDS, secondsToRefill, systemClock, type Clock, type KeyPolicy, type RateLimitRule } from './policy';
import type { KeyRateCounter } from './rate-counter';

const DAY_SECONDS = 86_400;

/**
 * What the checks made in memory say of a key, in the contract's order: off (`disabled`; `idle`: off
 * for want of use, which the caller records by turning the key off), past its end, or called from an
 * address its policy does not allow. Undefined: none of them refuses it.
 */
export type Standing = 'disabled' | 'idle' | 'expired' | 'address_not_allowed';

/**
 * The checks of a key's policy that need nothing but the policy and the clock (CPU only): enabled,
 * not idle, not expired, the caller's address allowed. `address` false: not checked (verification
 * without an address).
 */
export function standingOf(policy: KeyPolicy, now: number, address: ClientAddress | undefined | false): Standing | undefined {
  if (!policy.enabled) return 'disabled';
  // Idle turns the key off: it refuses as disabled, before expiry, as the contract orders them.
  if (policy.idle && now - policy.idle.since >= policy.idle.maxDays * DAY_SECONDS + IDLE_SLACK_SECONDS) return 'idle';
  if (policy.expiresAt !== null && now >= policy.expiresAt) return 'expired';
  if (address !== false && !policy.addresses.allows(address)) return 'address_not_allowed';
  return undefined;
}

/** Where a key stands against its rate limit after this use: `reset` is the window's end, Unix seconds. */
export interface RateState {
  limit: number;
  remaining: number;
  reset: number;
}

/** The verdict of the checks before credits: on to the credits (spent where the use is written), or refused and why. */
export type Verdict =
  | { admitted: true; rate: RateState | null }
  | { admitted: false; reason: Standing | 'rate_limited'; rate: RateState | null; retryAfter?: number };

/**
 * One use of a key, judged: created per request, so that the use counts once against the key's rate
 * limit however many times its policy is read again (a kept copy first, then a fresh one).
 */
export interface KeyUse {
  /** The moment the use is judged at: every check of this use reads it. */
  now: number;
  judge(keyId: string, policy: KeyPolicy, address: ClientAddress | undefined | false): Promise<Verdict>;
}

/**
 * The one place a key is judged against its policy, for every path a key authenticates by (and for
 * verification): the in-memory checks (standingOf), then the rate limit, counted for every use whose
 * secret or signature checked out, refused or not. Credits come last, spent by the statement that
 * writes the use (sessions/opening.ts, credits.ts), and only for a use admitted here.
 */
export class KeyJudge {
  constructor(
    private readonly counter: KeyRateCounter,
    readonly clock: Clock = systemClock,
  ) {}

  /** A use starting now. */
  use(): KeyUse {
    const now = this.clock();
    const counted = new Map<string, Promise<RateState | null>>();
    const count = (keyId: string, rule: RateLimitRule) => {
      const id = `${keyId}:${rule.limit}:${rule.windowSeconds}`;
      let state = counted.get(id);
      if (!state) counted.set(id, (state = this.count(keyId, rule, now)));
      return state;
    };
    return {
      now,
      judge: async (keyId, policy, address) => {
        const rate = policy.rateLimit && (await count(keyId, policy.rateLimit));
        const standing = standingOf(policy, now, address);
        if (standing) return { admitted: false, reason: standing, rate };
        if (rate && rate.remaining < 0) return { admitted: false, reason: 'rate_limited', rate: { ...rate, remaining: 0 }, retryAfter: rate.reset - now };
        return { admitted: true, rate: rate && { ...rate, remaining: Math.max(0, rate.remaining) } };
      },
    };
  }

  /** One use counted in the key's current window; null when the count is unknown (Redis away: the limit passes). */
  private async count(keyId: string, rule: RateLimitRule, now: number): Promise<RateState | null> {
    const window = Math.floor(now / rule.windowSeconds);
    const hits = await this.counter.hit(keyId, rule.windowSeconds, window);
    if (hits === undefined) return null;
    // remaining goes below 0 for the use that is one too many; the verdict reports it as 0.
    return { limit: rule.limit, remaining: rule.limit - hits, reset: (window + 1) * rule.windowSeconds };
  }
}

/** Seconds until credits come back, or undefined when they never do (no refill): a 401 then, not a 429. */
export function creditsRetryAfter(policy: KeyPolicy, now: number): number | undefined {
  const refill = policy.credits?.refill;
  return refill ? secondsToRefill(refill, now) : undefined;
}
