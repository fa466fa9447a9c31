import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit, type Options, type Store } from 'express-rate-limit';
import type { RateLimitRule, RateLimitSettings } from '../config';
import type { Logger } from '../logger';
import { AppError } from '../shared/errors';
import type { Principal } from '../shared/principals';
import type { AccountAlertListener, CounterStores, RateLimitHooks, RateLimits, RejectionListener } from './rate-limits';

const clientAddress = (req: Request) => ipKeyGenerator(req.ip ?? 'unknown');

/** No username is longer; longer names (which exist nowhere) share one counter rather than grow the store at will. */
const MAX_USERNAME_CHARS = 64;

/**
 * The username a password attempt is for, as given: a login's `username`, or the signed-in user whose
 * current password a route checks (which sets res.locals.passwordAttemptBy). Undefined: no attempt.
 */
function attemptedUsername(req: Request): string | undefined {
  const username: unknown = req.res?.locals.passwordAttemptBy ?? req.body?.username;
  return typeof username === 'string' ? username : undefined;
}

/** The username of a password attempt as its counters know it, or undefined when it names none (then it is no password attempt). */
function usernameOf(req: Request): string | undefined {
  const username = attemptedUsername(req);
  if (username === undefined) return undefined;
  return username.length > MAX_USERNAME_CHARS ? '(too long)' : username.toLowerCase();
}

/** What every limiter shares: where it counts, who hears of a refusal, where its own complaints go. */
interface LimiterKit {
  stores: CounterStores;
  onRejected: RejectionListener | undefined;
  logger: Options['logger'];
}

/**
 * express-rate-limit's messages: its configuration checks go to our log; a store's failure does not,
 * once per request: the Redis connection logs one warning per outage.
 */
function limiterLogger(logger: Logger): Options['logger'] {
  const storeFailure = /error from store/;
  return {
    error: (err: unknown, message?: string) => {
      if (!storeFailure.test(String(message))) logger.warn({ cause: (err as Error)?.message ?? String(err) }, `express-rate-limit: ${message ?? 'error'}`);
    },
    warn: (err: unknown) => logger.warn({ cause: (err as Error)?.message ?? String(err) }, 'express-rate-limit warning'),
  };
}

function limiter(name: string, rule: RateLimitRule, kit: LimiterKit, options: Partial<Options>): RequestHandler {
  const { stores, onRejected } = kit;
  const ownSkip = options.skip;
  return rateLimit({
    windowMs: rule.windowSeconds * 1000,
    limit: rule.limit,
    identifier: name,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: stores.storeFor(name),
    // Rate limiting guards the service; an unreachable Redis must not take logins down with it: while it
    // is down the limiter does not ask it (as if limits were off), and a command it waits for in vain
    // (the outage's first) is passed.
    passOnStoreError: true,
    logger: kit.logger,
    handler(req: Request, res: Response, next: NextFunction, used: Options) {
      onRejected?.(name);
      // Limiters that send no RateLimit headers still say when to come back.
      const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      if (!res.hasHeader('Retry-After') && resetTime) res.setHeader('Retry-After', Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000)));
      next(new AppError('TooManyRequests', `Too many requests: at most ${used.limit} per ${rule.windowSeconds} s; see Retry-After`));
    },
    ...options,
    skip: (req, res) => !stores.available() || (ownSkip?.(req, res) ?? false),
  });
}

/** The contract's limits, as configured; loaded through loadRateLimits only when they are on. */
export function buildRateLimits(settings: RateLimitSettings, logger: Logger, hooks: Required<Pick<RateLimitHooks, 'stores'>> & RateLimitHooks): RateLimits {
  const kit: LimiterKit = { stores: hooks.stores, onRejected: hooks.onRejected, logger: limiterLogger(logger) };
  const onlyFailedLogins: Partial<Options> = {
    skipSuccessfulRequests: true,
    // Only a refused login counts (see errorHandler): a 400 for a missing field or a 429 is no password attempt.
    requestWasSuccessful: (_req, res) => res.locals.loginRefused !== true,
    // Runs after the body parser; without a username there is nothing to count against.
    skip: (req) => usernameOf(req) === undefined,
  };
  return {
    tokenRoutes: [limiter('token-routes', settings.tokenRoutes, kit, { keyGenerator: clientAddress })],
    // Never per username alone: then anyone could lock anyone out, the admin included (contract, "No lockout by strangers").
    passwordFailures: [
      limiter('password-failures-address', settings.passwordAddressFailures, kit, {
        ...onlyFailedLogins,
        keyGenerator: clientAddress,
      }),
      limiter('password-failures-user-address', settings.passwordFailures, kit, {
        ...onlyFailedLogins,
        keyGenerator: (req) => `${clientAddress(req)}|user:${usernameOf(req)}`,
      }),
      accountWatch(settings, hooks.stores, hooks.onAccountAlert),
    ],
    bearerFailures: [
      limiter('bearer-failures', settings.bearerFailures, kit, {
        keyGenerator: clientAddress,
        skipSuccessfulRequests: true,
        requestWasSuccessful: (_req, res) => res.locals.bearerRefused !== true,
        // The budget of refused tokens is not news to a caller whose token is good: no RateLimit headers
        // (the key routes' own header stays the one policy they announce); a refusal still has Retry-After.
        standardHeaders: false,
      }),
    ],
    keyOperations: [
      limiter('key-operations', settings.keyOperations, kit, {
        keyGenerator: (_req, res) => `principal:${(res.locals.principal as Principal).id}`,
      }),
    ],
  };
}

const ACCOUNT_ALERT_DELAY_MS = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The failed logins of each username from every address together. Past LOGIN_ACCOUNT_ALERT of them in
 * the window, every attempt on that username, right password included, waits a fixed second before
 * it is judged: a distributed guesser is slowed, and the user is never locked out. The failure that
 * crosses the threshold is told to `onAlert`, once per window (an atomic count, so once across
 * instances sharing Redis). A counter store that fails (Redis away) slows nothing and alerts nothing.
 */
function accountWatch(settings: RateLimitSettings, stores: CounterStores, onAlert: AccountAlertListener | undefined): RequestHandler {
  const { windowSeconds } = settings.passwordFailures;
  const store: Store = stores.storeFor('password-failures-account') ?? new MemoryStore();
  // As express-rate-limit does for its own stores: a Redis away now fails the init, which is retried at first use.
  Promise.resolve(store.init?.({ windowMs: windowSeconds * 1000 } as Options)).catch(() => undefined);
  const threshold = settings.accountAlert;

  async function countFailure(key: string, username: string, req: Request): Promise<void> {
    const { totalHits } = await store.increment(key);
    if (totalHits === threshold + 1) await onAlert?.({ username: username.slice(0, MAX_USERNAME_CHARS), failures: totalHits, windowSeconds, req });
  }

  return async function watchAccount(req: Request, res: Response, next: NextFunction): Promise<void> {
    const name = usernameOf(req);
    if (name === undefined || !stores.available()) return next();
    const key = `user:${name}`;
    const username = attemptedUsername(req)!;
    res.once('finish', () => {
      if (res.locals.loginRefused === true) countFailure(key, username, req).catch(() => undefined);
    });
    const failures = (await Promise.resolve(store.get?.(key)).catch(() => undefined))?.totalHits ?? 0;
    if (failures > threshold) await sleep(ACCOUNT_ALERT_DELAY_MS);
    next();
  };
}
