import type { RateLimitSettings } from '../config';
import { NO_RATE_LIMITS, type AccountAlertListener, type RateLimits, type RejectionListener, type StoreFactory } from './rate-limits';

/**
 * The contract's limits as configured, counted in memory unless `storeFor` gives a store.
 * express-rate-limit is loaded only when the limits are on: otherwise its heap is held for nothing,
 * and a service's peak RSS grows with its heap (docs/performance.md, "memory").
 */
export async function loadRateLimits(
  settings: RateLimitSettings,
  storeFor: StoreFactory = () => undefined,
  onRejected?: RejectionListener,
  onAccountAlert?: AccountAlertListener,
): Promise<RateLimits> {
  if (!settings.enabled) return NO_RATE_LIMITS;
  return (await import('./rate-limit-policies')).buildRateLimits(settings, storeFor, onRejected, onAccountAlert);
}
