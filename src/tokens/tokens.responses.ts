import { z } from 'zod';

/** A JWS in compact serialisation: three base64url parts. */
const jwt = z.string().regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);

/** The token response object: exactly these nine fields, all always present. */
export const tokenResponse = z.strictObject({
  access_token: jwt.meta({ readOnly: true, description: 'Bearer token (JWT) for all later calls.' }),
  expires_in: z.int().min(1).meta({ readOnly: true, description: "Seconds until the access token expires: ACCESS_TOKEN_TTL, or less when an API key's expiry comes sooner." }),
  refresh_expires_in: z.int().min(0).meta({ readOnly: true, description: 'Seconds until the refresh token expires.' }),
  refresh_token: jwt.meta({ readOnly: true, description: 'Refresh token (JWT); works once.' }),
  token_type: z
    .enum(['bearer', 'DPoP'])
    .meta({ readOnly: true, description: '`bearer`, or `DPoP` when the tokens are bound to the key of the request\'s DPoP proof (RFC 9449 §5).' }),
  id_token: jwt.meta({ readOnly: true, description: 'ID token (JWT).' }),
  'not-before-policy': z.literal(0).meta({ type: 'integer', readOnly: true }),
  'session-state': z.string().min(1).meta({ readOnly: true, description: 'Session identifier.' }),
  scope: z
    .string()
    .regex(/^openid(?: [a-z0-9][a-z0-9:._-]*)*$/)
    .meta({ readOnly: true, description: "Space-separated scopes: `openid` plus those of the role, then an API key's permissions." }),
});

/**
 * The token endpoint's response (RFC 6749 §5.1): the same object, with a refresh token except for
 * client credentials and token exchange, an ID token only for a user's login by a named client asking
 * for `openid`, and `issued_token_type` for a token exchange.
 */
export const oauthTokenResponse = tokenResponse.partial({ refresh_token: true, refresh_expires_in: true, id_token: true }).extend({
  issued_token_type: z
    .literal('urn:ietf:params:oauth:token-type:access_token')
    .optional()
    .meta({ readOnly: true, description: 'Token exchange only (RFC 8693 §2.2.1): the type of the token issued, an access token.' }),
  scope: z
    .string()
    .regex(/^[a-z0-9][a-z0-9:._-]*(?: [a-z0-9][a-z0-9:._-]*)*$/)
    .meta({
      readOnly: true,
      description: "Space-separated scopes: exactly those asked for, or without `scope` `openid` plus those of the role, then an API key's permissions.",
    }),
});

/** Exactly the spec's token response object. */
export type TokenResponse = z.output<typeof tokenResponse>;

export type OAuthTokenResponse = z.output<typeof oauthTokenResponse>;
