import { z } from 'zod';
import { wholeSeconds, type EnvOf } from './env-kit';

/** How long what a login issues lives, and the leeway for clocks. */
export const tokensEnv = {
  ACCESS_TOKEN_TTL: wholeSeconds(300).describe('Access and ID token lifetime, whole seconds (at least 1)'),
  REFRESH_TOKEN_TTL: wholeSeconds(1800).describe("Refresh token lifetime, whole seconds (at least 1), never past the session's end"),
  SESSION_MAX_TTL: wholeSeconds(36000).describe('Absolute session lifetime, whole seconds (at least 1): refreshing never extends a session past it'),
  CLOCK_TOLERANCE: z.coerce.number().int().min(0).max(30).default(30).describe('Leeway, 0 to 30 seconds, for `exp` and `iat` checks (clock skew)'),
};

export function tokensSettings(e: EnvOf<typeof tokensEnv>) {
  return {
    accessTokenTtl: e.ACCESS_TOKEN_TTL,
    refreshTokenTtl: e.REFRESH_TOKEN_TTL,
    sessionMaxTtl: e.SESSION_MAX_TTL,
    clockTolerance: e.CLOCK_TOLERANCE,
  };
}
