import type { Request, RequestHandler } from 'express';
import type { Store } from 'express-rate-limit';

/** Gives each limiter its own counter store (Redis when shared), or undefined for memory. */
export type StoreFactory = (name: string) => Store | undefined;

/** Where the limiters count: a shared store and whether it answers now (while it does not, they pass every request). */
export interface CounterStores {
  storeFor: StoreFactory;
  available: () => boolean;
}

/** Where the limits count, and who hears of what they do. */
export interface RateLimitHooks {
  /** Where to count; in memory unless given. */
  stores?: CounterStores;
  onRejected?: RejectionListener;
  onAccountAlert?: AccountAlertListener;
}

/** Counting in each process's memory: always there. */
export const IN_MEMORY: CounterStores = { storeFor: () => undefined, available: () => true };

/** Told the limiter's name each time one refuses a request (metrics). */
export type RejectionListener = (limiter: string) => void;

/** One username has collected more failed logins in the window than LOGIN_ACCOUNT_ALERT, from all addresses together. */
export interface AccountAlert {
  /** As the request named it (cut to 64 characters). */
  username: string;
  failures: number;
  windowSeconds: number;
  /** The attempt that crossed the threshold: its address and request id go into the audit trail. */
  req: Request;
}

/** Told once per window and username when an account alert starts (audit trail and log). */
export type AccountAlertListener = (alert: AccountAlert) => Promise<void>;

/**
 * Each limit is the handlers a router mounts in its place: none when limits are off, so a request
 * does not walk a layer that only calls next() (every layer costs each request that passes it).
 */
export interface RateLimits {
  /** Every request to the token routes (the three grants, revocation, introspection), per client address. */
  tokenRoutes: RequestHandler[];
  /**
   * Failed password logins (refusals of the credentials), per username and client address and per
   * client address, never per username alone; successes cost nothing. Also the account alert: past
   * LOGIN_ACCOUNT_ALERT failures of one username from everywhere, its attempts are slowed, not refused.
   * Mount after the body parser; a route that checks a signed-in user's current password sets
   * res.locals.passwordAttemptBy to their username first.
   */
  passwordFailures: RequestHandler[];
  /** Refused bearer tokens (401s) per client address; mount before authenticate(). Valid tokens cost nothing. */
  bearerFailures: RequestHandler[];
  /** Key operations per principal; mount after authenticate(). */
  keyOperations: RequestHandler[];
}

/** What the routers mount when RATE_LIMIT_ENABLED=false. */
export const NO_RATE_LIMITS: RateLimits = { tokenRoutes: [], passwordFailures: [], bearerFailures: [], keyOperations: [] };
