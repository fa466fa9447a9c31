import { z } from 'zod';
import { KEY_REFUSAL_MESSAGES, type KeyRefusal } from './key-refusals';

/** The closed list of error names the API may answer with, and their HTTP status. */
export const ERROR_STATUS = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  Conflict: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  TooManyRequests: 429,
  InternalServerError: 500,
  ServiceUnavailable: 503,
} as const;

export type ErrorName = keyof typeof ERROR_STATUS;

const ERROR_NAMES = Object.keys(ERROR_STATUS) as [ErrorName, ...ErrorName[]];

/** The one error body of every error status: exactly `{status, name, message}`. */
export const errorBody = z.strictObject({
  status: z.int32().min(400).max(599).meta({ format: 'int32', description: 'Equals the HTTP status; 4xx a client fault, 5xx a service fault.' }),
  name: z.enum(ERROR_NAMES).meta({ description: 'Type of the error.' }),
  message: z.string().meta({ description: 'Description of the error.' }),
});

export type ErrorBody = z.output<typeof errorBody>;

/** An error whose message is safe to show to the client. */
export class AppError extends Error {
  override readonly name: ErrorName;
  readonly status: number;
  /** Seconds a client should wait before trying again, sent as `Retry-After` (a 429 whose wait is known). */
  readonly retryAfter: number | undefined;

  constructor(name: ErrorName, message: string, options?: { cause?: unknown; retryAfter?: number }) {
    super(message, options);
    this.name = name;
    this.status = ERROR_STATUS[name];
    this.retryAfter = options?.retryAfter;
  }

  toBody(): ErrorBody {
    return { status: this.status, name: this.name, message: this.message };
  }
}

/**
 * A 401. `tokenRefused` marks that a credential was presented and refused, which RFC 6750 wants
 * signalled as error="invalid_token" in the WWW-Authenticate challenge.
 */
export class UnauthorizedError extends AppError {
  constructor(
    message: string,
    readonly tokenRefused = true,
  ) {
    super('Unauthorized', message);
  }
}

/**
 * A DPoP proof that is missing where one is needed, malformed, stale, replayed, for another request,
 * or by another key than the token's (RFC 9449 §4.3): 401 with `WWW-Authenticate: DPoP
 * error="invalid_dpop_proof"` on this service's routes, 400 `invalid_dpop_proof` at the token endpoint.
 */
export class DpopProofError extends UnauthorizedError {}

/**
 * A DPoP-bound access token presented as a bearer token (RFC 9449 §7.2): refused as an invalid token,
 * with a DPoP challenge beside the Bearer one so the client learns which scheme the token needs.
 */
export class DpopBoundTokenError extends UnauthorizedError {}

export const badRequest = (message: string) => new AppError('BadRequest', message);
export const forbidden = (message = 'You are not allowed to perform this operation') =>
  new AppError('Forbidden', message);
export const notFound = (message: string) => new AppError('NotFound', message);
export const conflict = (message: string) => new AppError('Conflict', message);

/** Why a login was refused; recorded, never shown to the caller (who gets one uniform 401). */
export type LoginFailureReason =
  | 'malformed_request_token'
  | 'unknown_api_key'
  | 'invalid_request_token'
  | 'expired_request_token'
  | 'replayed_request_token'
  /** A request token (or client assertion) for a key imported from another system: it has no secret of this service to sign with. */
  | 'imported_key_cannot_sign'
  /** An API key's client authentication with a secret that is not its appkey. */
  | 'invalid_client_secret'
  | 'unknown_user'
  | 'wrong_password'
  | 'user_disabled'
  /** The user's password, status or existence changed while the login was being checked. */
  | 'user_changed';

/** Refusals of a username and password: no token was sent, so RFC 6750's invalid_token does not apply. */
const CREDENTIAL_REASONS: ReadonlySet<LoginFailureReason> = new Set(['unknown_user', 'wrong_password', 'user_disabled', 'user_changed']);

/**
 * A refused login. The client sees only the message; `reason` (unknown user, wrong password...)
 * goes to the audit trail, where telling the cases apart helps an operator and harms no one.
 */
export class LoginRefusedError extends UnauthorizedError {
  constructor(
    message: string,
    readonly reason: LoginFailureReason,
  ) {
    super(message, !CREDENTIAL_REASONS.has(reason));
  }
}

/**
 * A key refused by its policy after its secret or signature checked out: 401 with a message naming
 * the reason (the token endpoint makes it invalid_client or invalid_grant), recorded as
 * `token.refused`, never as a failed login.
 */
export class KeyRefusedError extends UnauthorizedError {
  constructor(readonly reason: KeyRefusal) {
    super(KEY_REFUSAL_MESSAGES[reason]);
  }
}

/**
 * A key refused by its policy where waiting helps (its rate limit, or credits that a refill brings
 * back): 429 with Retry-After, in the uniform body of the route, the OAuth endpoints included.
 */
export class KeyThrottledError extends AppError {
  constructor(
    readonly reason: Extract<KeyRefusal, 'rate_limited' | 'usage_exceeded'>,
    retryAfter: number,
  ) {
    super('TooManyRequests', KEY_REFUSAL_MESSAGES[reason], { retryAfter: Math.max(1, Math.ceil(retryAfter)) });
  }
}

/** RFC 6749 §5.2's error codes (with RFC 8693's and RFC 9449's), as the token endpoint (and revocation, introspection) answers them. */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'invalid_scope',
  /** RFC 8693 §2.2.2: an `audience` or `resource` the service does not issue tokens for. */
  'invalid_target',
  /** RFC 9449 §5: the DPoP proof of a token request is missing, bad, or by another key than the session's. */
  'invalid_dpop_proof',
] as const;
export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number];

/** The error body of the OAuth 2.0 endpoints: the uniform one and RFC 6749 §5.2's two members. */
export const oauthErrorBody = errorBody.extend({
  error: z.enum(OAUTH_ERROR_CODES).meta({ description: 'RFC 6749 §5.2 error code, or RFC 8693 §2.2.2 `invalid_target`, or RFC 9449 §5 `invalid_dpop_proof`.' }),
  error_description: z.string().meta({ description: 'The same text as message.' }),
});

/**
 * An error of the OAuth 2.0 endpoints: the uniform body plus RFC 6749's `error` and
 * `error_description`. 400, but 401 for `invalid_client`, which answers a Basic challenge when the
 * client authenticated with Basic (RFC 6749 §5.2).
 */
export class OAuthError extends AppError {
  readonly basicChallenge: boolean;

  constructor(
    readonly error: OAuthErrorCode,
    description: string,
    options: { basicChallenge?: boolean; cause?: unknown } = {},
  ) {
    super(error === 'invalid_client' ? 'Unauthorized' : 'BadRequest', description, { cause: options.cause });
    this.basicChallenge = options.basicChallenge ?? false;
  }

  override toBody(): z.output<typeof oauthErrorBody> {
    return { ...super.toBody(), error: this.error, error_description: this.message };
  }
}
