import type { RateLimitSettings } from '../config';
import type { Logger } from '../logger';
import { IN_MEMORY, NO_RATE_LIMITS, type RateLimitHooks, type RateLimits } from './rate-limits';

/**
 * The contract's limits as configured. express-rate-limit is loaded only when the limits are on:
 * otherwise its heap is held for nothing, and a service's peak RSS grows with its heap
 * (docs/performance.md, "memory").
 */
export async function loadRateLimits(settings: RateLimitSettings, logger: Logger, hooks: RateLimitHooks = {}): Promise<RateLimits> {
  if (!settings.enabled) return NO_RATE_LIMITS;
  return (await import('./rate-limit-policies')).buildRateLimits(settings, logger, { ...hooks, stores: hooks.stores ?? IN_MEMORY });
}
