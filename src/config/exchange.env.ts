import { z } from 'zod';
import type { EnvOf } from './env-kit';

/** An audience or resource name: visible ASCII, no comma (the list separator) and no space. */
const AUDIENCE_NAME = /^[\x21-\x2b\x2d-\x7e]{1,255}$/;

/** Comma-separated names, each once; empty or unset: none. */
const audienceList = z
  .string()
  .default('')
  .transform((text) => [...new Set(text.split(',').map((name) => name.trim()).filter(Boolean))])
  .pipe(z.array(z.string().regex(AUDIENCE_NAME, 'each name must be 1 to 255 visible ASCII characters without a comma')).max(100, 'at most 100 names'));

/** Token exchange (RFC 8693): whom an exchanged token may be for. */
export const exchangeEnv = {
  EXCHANGE_AUDIENCES: audienceList.describe(
    'Comma-separated `audience` or `resource` values a token exchange may ask for (at most 100, each 1 to 255 visible ASCII characters); ' +
      '`AUDIENCE` is always allowed, and is the `aud` when a request names none. Default: none beyond `AUDIENCE`',
  ),
};

export function exchangeSettings(e: EnvOf<typeof exchangeEnv>) {
  return { exchangeAudiences: Object.freeze(e.EXCHANGE_AUDIENCES) };
}
