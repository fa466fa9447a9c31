import { z } from 'zod';

/**
 * A credential is only required to be there and be a string: any string that is not a valid one,
 * empty included, is a refused credential (401), as the contract has it, not a 400. The exceptions:
 * a string holding NUL or an unpaired surrogate is no credential at all (400 naming the field, from
 * parseInput, as everywhere), and a password bcrypt cannot check faithfully (over 72 bytes).
 */
const credential = z.string();

export const apiKeyTokenBody = z.strictObject({
  /** The request token: a JWT signed with the appkey. */
  jwt: credential,
});

export const passwordTokenBody = z.strictObject({
  username: credential,
  password: credential,
  /** Accepted for OAuth 2.0 clients, which always send it. */
  grant_type: z.literal('password').optional(),
});

export const refreshTokenBody = z.strictObject({
  refresh_token: credential,
  /** Accepted for OAuth 2.0 clients, which always send it. */
  grant_type: z.literal('refresh_token').optional(),
});
