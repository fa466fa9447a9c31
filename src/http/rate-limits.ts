import type { RequestHandler } from 'express';
import type { Store } from 'express-rate-limit';

/** Gives each limiter its own counter store (Redis when shared), or undefined for memory. */
export type StoreFactory = (name: string) => Store | undefined;

/** Told the limiter's name each time one refuses a request (metrics). */
export type RejectionListener = (limiter: string) => void;

/**
 * Each limit is the handlers a router mounts in its place: none when limits are off, so a request
 * does not walk a layer that only calls next() (every layer costs each request that passes it).
 */
export interface RateLimits {
  /** Every request to the token routes (the three grants, revocation, introspection), per client address. */
  tokenRoutes: RequestHandler[];
  /** Failed password logins (401s), per username and per client address; successes cost nothing. */
  passwordFailures: RequestHandler[];
  /** Key operations per principal; mount after authenticate(). */
  keyOperations: RequestHandler[];
}

/** What the routers mount when RATE_LIMIT_ENABLED=false. */
export const NO_RATE_LIMITS: RateLimits = { tokenRoutes: [], passwordFailures: [], keyOperations: [] };
