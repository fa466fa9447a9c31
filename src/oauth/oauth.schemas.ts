import { z } from 'zod';
import { storableString } from '../http/validate';

/** Advisory only (RFC 7009 §2.1, RFC 7662 §2.1): the service tries this kind first, then the other. */
const tokenTypeHint = z.enum(['access_token', 'refresh_token']).optional();

export const revocationBody = z.strictObject({
  /** The access or refresh token to revoke; revoking either ends its whole session. */
  token: storableString().min(1, 'must not be empty'),
  token_type_hint: tokenTypeHint,
});

export const introspectionBody = z.strictObject({
  /** The access or refresh token to describe. */
  token: storableString().min(1, 'must not be empty'),
  token_type_hint: tokenTypeHint,
});

export type TokenTypeHint = NonNullable<z.output<typeof revocationBody>['token_type_hint']>;
