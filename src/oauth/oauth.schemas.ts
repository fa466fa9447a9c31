import { z } from 'zod';

/** Advisory only (RFC 7009 §2.1, RFC 7662 §2.1): the service tries this kind first, then the other. */
const tokenTypeHint = z.enum(['access_token', 'refresh_token']).optional();

export const revocationBody = z.strictObject({
  /** The access or refresh token to revoke; revoking either ends its whole session. */
  token: z.string().min(1, 'must not be empty'),
  token_type_hint: tokenTypeHint,
});

export const introspectionBody = z.strictObject({
  /** The access or refresh token to describe. */
  token: z.string().min(1, 'must not be empty'),
  token_type_hint: tokenTypeHint,
});

export type TokenTypeHint = NonNullable<z.output<typeof revocationBody>['token_type_hint']>;

/** A client_id: 1 to 64 visible ASCII characters. */
const clientId = z.string().regex(/^[\x21-\x7e]{1,64}$/);

/** What every grant may carry: client authentication in the body, and the standard extra parameters. */
const tokenRequestCommon = {
  /** A public client's name, or with client_secret the API key's appname (client_secret_post). */
  client_id: clientId.optional(),
  /** The appkey (client_secret_post); empty means no client authentication. */
  client_secret: z.string().optional(),
  client_assertion_type: z.literal('urn:ietf:params:oauth:client-assertion-type:jwt-bearer').optional(),
  /** A request token signed with the appkey (client_secret_jwt), for client_credentials. */
  client_assertion: z.string().optional(),
  /** Space-separated; within what the role grants (openid always). Without it, all the role grants. */
  scope: z.string().optional(),
  /** Token exchange: whom the new token is for, a value of EXCHANGE_AUDIENCES (or AUDIENCE); one of resource and audience. */
  resource: z.string().optional(),
  audience: z.string().optional(),
};

/** RFC 8693 §3: the one token type a token exchange takes and issues. */
const accessTokenType = z.literal('urn:ietf:params:oauth:token-type:access_token');

/**
 * The token endpoint's request (RFC 6749 §3.2), one shape per grant; unknown parameters are ignored and
 * any parameter sent twice is invalid_request. Described here; parsed by token-request.ts.
 */
export const oauthTokenRequest = z.union([
  z.looseObject({ grant_type: z.literal('password'), username: z.string(), password: z.string(), ...tokenRequestCommon }),
  z.looseObject({ grant_type: z.literal('refresh_token'), refresh_token: z.string(), ...tokenRequestCommon }),
  z.looseObject({ grant_type: z.literal('client_credentials'), ...tokenRequestCommon }),
  z.looseObject({ grant_type: z.literal('urn:ietf:params:oauth:grant-type:jwt-bearer'), assertion: z.string(), ...tokenRequestCommon }),
  z.looseObject({
    grant_type: z.literal('urn:ietf:params:oauth:grant-type:token-exchange'),
    /** A live access token of this service: the token the new one narrows. */
    subject_token: z.string(),
    subject_token_type: accessTokenType,
    /** A live access token of whoever acts for the subject: the new token's `act`. */
    actor_token: z.string().optional(),
    /** Required with actor_token, and only with it. */
    actor_token_type: accessTokenType.optional(),
    requested_token_type: accessTokenType.optional(),
    ...tokenRequestCommon,
  }),
]);

/** Revocation and introspection on /oauth2/: the token, its hint, and optionally an API key's client authentication. */
export const oauthTokenOperandRequest = z.looseObject({
  token: z.string(),
  token_type_hint: z.string().optional(),
  client_id: clientId.optional(),
  client_secret: z.string().optional(),
});
