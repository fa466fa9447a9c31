import { z } from 'zod';
import { storableString } from '../http/validate';

const nonEmpty = storableString().min(1, 'must not be empty');

export const apiKeyTokenBody = z.strictObject({
  /** The request token: a JWT signed with the appkey. */
  jwt: nonEmpty,
});

export const passwordTokenBody = z.strictObject({
  username: nonEmpty,
  password: nonEmpty,
  /** Accepted for OAuth 2.0 clients, which always send it. */
  grant_type: z.literal('password').optional(),
});

export const refreshTokenBody = z.strictObject({
  refresh_token: nonEmpty,
  /** Accepted for OAuth 2.0 clients, which always send it. */
  grant_type: z.literal('refresh_token').optional(),
});

export type PasswordTokenInput = z.output<typeof passwordTokenBody>;
