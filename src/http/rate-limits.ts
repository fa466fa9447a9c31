import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Options, type Store } from 'express-rate-limit';
import type { RateLimitRule, RateLimitSettings } from '../config';
import { AppError } from '../errors';
import type { Principal } from '../auth/roles';

/** Gives each limiter its own counter store (Redis when shared), or undefined for memory. */
export type StoreFactory = (name: string) => Store | undefined;

/** Told the limiter's name each time one refuses a request (metrics). */
export type RejectionListener = (limiter: string) => void;

export interface RateLimits {
  /** Every request to the token routes (the three grants, revocation, introspection), per client address. */
  tokenRoutes: RequestHandler;
  /** Failed password logins (401s), per username and per client address; successes cost nothing. */
  passwordFailures: RequestHandler[];
  /** Key operations per principal; mount after authenticate(). */
  keyOperations: RequestHandler;
}

const passThrough: RequestHandler = function noRateLimit(_req, _res, next) {
  next();
};

const clientAddress = (req: Request) => ipKeyGenerator(req.ip ?? 'unknown');

function limiter(name: string, rule: RateLimitRule, storeFor: StoreFactory, onRejected: RejectionListener | undefined, options: Partial<Options>): RequestHandler {
  return rateLimit({
    windowMs: rule.windowSeconds * 1000,
    limit: rule.limit,
    identifier: name,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: storeFor(name),
    // Rate limiting guards the service; an unreachable Redis must not take logins down with it.
    passOnStoreError: true,
    handler(_req: Request, _res: Response, next: NextFunction, used: Options) {
      onRejected?.(name);
      next(new AppError('TooManyRequests', `Too many requests: at most ${used.limit} per ${rule.windowSeconds} s; see Retry-After`));
    },
    ...options,
  });
}

/** The contract's three limits, built from configuration; all pass-through when disabled. */
export function buildRateLimits(
  settings: RateLimitSettings,
  storeFor: StoreFactory = () => undefined,
  onRejected?: RejectionListener,
): RateLimits {
  if (!settings.enabled) {
    return { tokenRoutes: passThrough, passwordFailures: [], keyOperations: passThrough };
  }
  const onlyFailedLogins: Partial<Options> = {
    skipSuccessfulRequests: true,
    // Only a refused password counts: a 400 for a missing field or a 429 is no password attempt.
    requestWasSuccessful: (_req, res) => res.statusCode !== 401,
  };
  return {
    tokenRoutes: limiter('token-routes', settings.tokenRoutes, storeFor, onRejected, { keyGenerator: clientAddress }),
    passwordFailures: [
      limiter('password-failures-address', settings.passwordFailures, storeFor, onRejected, {
        ...onlyFailedLogins,
        keyGenerator: clientAddress,
      }),
      limiter('password-failures-username', settings.passwordFailures, storeFor, onRejected, {
        ...onlyFailedLogins,
        // Runs after the body parser; without a username there is nothing to count against.
        skip: (req) => typeof req.body?.username !== 'string',
        keyGenerator: (req) => `user:${(req.body.username as string).toLowerCase()}`,
      }),
    ],
    keyOperations: limiter('key-operations', settings.keyOperations, storeFor, onRejected, {
      keyGenerator: (_req, res) => `principal:${(res.locals.principal as Principal).id}`,
    }),
  };
}
