import { z } from 'zod';
import { count, flag, wholeSeconds, type EnvOf } from './env-kit';

/** The service's own protection: limits per address, username and principal, and where they count. */
export const rateLimitsEnv = {
  RATE_LIMIT_ENABLED: flag('true').describe('`false` turns every rate limit of the service off (not the keys\' own policies)'),
  RATE_LIMIT_PASSWORD_FAILURES: count(10).describe('Failed password logins per username and client address together, per window; successful logins cost nothing. Never per username alone: no one can lock a user out from elsewhere'),
  RATE_LIMIT_PASSWORD_ADDRESS_FAILURES: count(30).describe('Failed password logins per client address, whatever the username, per window'),
  RATE_LIMIT_PASSWORD_WINDOW: wholeSeconds(900).describe('The window of the two password limits, seconds'),
  LOGIN_ACCOUNT_ALERT: count(50).describe('Past this many failed logins of one username from all addresses in the window, each further attempt on it waits an extra second, `login.throttled` is recorded once per window and a warning logged; nothing is refused for it'),
  RATE_LIMIT_BEARER_FAILURES: count(300).describe('Refused bearer tokens per client address, per window, on the bearer-protected routes (key routes, audit events, introspection); valid tokens cost nothing'),
  RATE_LIMIT_BEARER_WINDOW: wholeSeconds(60).describe('The window of the refused-bearer limit, seconds'),
  RATE_LIMIT_TOKEN_REQUESTS: count(300).describe('Requests to the token routes (every grant, revoke, introspect) per client address, per window'),
  RATE_LIMIT_TOKEN_WINDOW: wholeSeconds(60).describe('The window of the token-route limit, seconds'),
  RATE_LIMIT_KEY_REQUESTS: count(1200).describe('Key operations per principal (user or API key), per window'),
  RATE_LIMIT_KEY_WINDOW: wholeSeconds(60).describe('The window of the key-operation limit, seconds'),
  RATE_LIMIT_REDIS_PREFIX: z.string().min(1).default('apikeys:rl:').describe('Key prefix in Redis, so deployments can share one Redis'),
};

export function rateLimitsSettings(e: EnvOf<typeof rateLimitsEnv>) {
  return {
    rateLimits: Object.freeze({
      enabled: e.RATE_LIMIT_ENABLED === 'true',
      passwordFailures: { limit: e.RATE_LIMIT_PASSWORD_FAILURES, windowSeconds: e.RATE_LIMIT_PASSWORD_WINDOW },
      passwordAddressFailures: { limit: e.RATE_LIMIT_PASSWORD_ADDRESS_FAILURES, windowSeconds: e.RATE_LIMIT_PASSWORD_WINDOW },
      accountAlert: e.LOGIN_ACCOUNT_ALERT,
      bearerFailures: { limit: e.RATE_LIMIT_BEARER_FAILURES, windowSeconds: e.RATE_LIMIT_BEARER_WINDOW },
      tokenRoutes: { limit: e.RATE_LIMIT_TOKEN_REQUESTS, windowSeconds: e.RATE_LIMIT_TOKEN_WINDOW },
      keyOperations: { limit: e.RATE_LIMIT_KEY_REQUESTS, windowSeconds: e.RATE_LIMIT_KEY_WINDOW },
      redisPrefix: e.RATE_LIMIT_REDIS_PREFIX,
    }),
  };
}
