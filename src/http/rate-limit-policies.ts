import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Options } from 'express-rate-limit';
import type { RateLimitRule, RateLimitSettings } from '../config';
import { AppError } from '../shared/errors';
import type { Principal } from '../shared/principals';
import type { RateLimits, RejectionListener, StoreFactory } from './rate-limits';

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

/** The contract's three limits, as configured; loaded through loadRateLimits only when they are on. */
export function buildRateLimits(settings: RateLimitSettings, storeFor: StoreFactory, onRejected: RejectionListener | undefined): RateLimits {
  const onlyFailedLogins: Partial<Options> = {
    skipSuccessfulRequests: true,
    // Only a refused login counts (see errorHandler): a 400 for a missing field or a 429 is no password attempt.
    requestWasSuccessful: (_req, res) => res.locals.loginRefused !== true,
  };
  return {
    tokenRoutes: [limiter('token-routes', settings.tokenRoutes, storeFor, onRejected, { keyGenerator: clientAddress })],
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
    keyOperations: [
      limiter('key-operations', settings.keyOperations, storeFor, onRejected, {
        keyGenerator: (_req, res) => `principal:${(res.locals.principal as Principal).id}`,
      }),
    ],
  };
}
