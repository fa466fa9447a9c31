import { createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { LoginRefusedError } from '../shared/errors';
import type { LoginFailureReason } from '../shared/errors';
import { nowSeconds } from '../signing-keys/token-signer';
import { APPNAME_PATTERN } from '../shared/names';

const REQUEST_TOKEN_ALGORITHMS: jwt.Algorithm[] = ['HS256', 'HS384', 'HS512'];
const MAX_JTI_LENGTH = 256;
// No control characters: the jti is stored, and PostgreSQL text refuses NUL.
const PRINTABLE = /^[^\p{Cc}]+$/u;

export interface RequestTokenClaims {
  appname: string;
  jti: string;
  iat: number;
  exp: number;
}

/** What a request token is checked against besides its appkey. */
export interface RequestTokenRules {
  /** The `aud` values a request token may carry: this service's issuer, and on the token endpoint its URL. */
  audiences: readonly string[];
  /** The longest `exp - iat` accepted: 300 s on the API-key route, 3600 s (what client libraries send) on the token endpoint. */
  maxLifetimeSeconds: number;
  /** Leeway, in seconds, for exp and iat. */
  clockTolerance: number;
}

export interface VerifiedRequestToken {
  claims: RequestTokenClaims;
  signedWith: number;
}

const refuse = (message: string, reason: LoginFailureReason = 'invalid_request_token') => new LoginRefusedError(message, reason);

/** The appname a request token claims to come from (`iss`), read before any verification. */
export function claimedAppname(token: string): string {
  const decoded = jwt.decode(token, { complete: true });
  if (!decoded || typeof decoded.payload === 'string') throw refuse('Request token is not a valid JWT', 'malformed_request_token');
  if (!REQUEST_TOKEN_ALGORITHMS.includes(decoded.header.alg as jwt.Algorithm)) {
    throw refuse('Request token must be signed with HS256, HS384 or HS512', 'malformed_request_token');
  }
  // RFC 7515: a token naming header extensions as critical must be refused by whoever does not know them, as here.
  if (decoded.header.crit !== undefined) throw refuse('Request token must not carry crit', 'malformed_request_token');
  const iss = decoded.payload.iss;
  // Unverified input about to reach a query: only a possible appname goes further.
  if (typeof iss !== 'string' || !APPNAME_PATTERN.test(iss)) throw refuse('Request token must carry the appname as iss', 'malformed_request_token');
  return iss;
}

/** Signature, algorithm and exp, against each appkey in turn; the first that signed the token wins, or undefined if none did. */
function verifyWithAny(token: string, appkeys: readonly string[], clockTolerance: number) {
  for (let i = 0; i < appkeys.length; i++) {
    try {
      const secret = createSecretKey(Buffer.from(appkeys[i]!, 'utf8'));
      const payload = jwt.verify(token, secret, { algorithms: REQUEST_TOKEN_ALGORITHMS, clockTolerance }) as jwt.JwtPayload;
      return { payload, signedWith: i };
    } catch (err) {
      // jsonwebtoken checks the signature first: only a wrong signature is worth trying the next appkey.
      if (err instanceof jwt.JsonWebTokenError && err.message === 'invalid signature') continue;
      if (err instanceof jwt.TokenExpiredError) throw refuse('Request token has expired', 'expired_request_token');
      throw refuse('Invalid request token');
    }
  }
  return undefined;
}

/**
 * Checks a request token against the key's valid appkeys (HMAC secrets: the current one, then the
 * previous one during a regen's grace) and the contract's claim rules. Returns the claims and the
 * index of the appkey that signed it, or undefined when none of them did (the caller decides: cached
 * appkeys may be stale). The replay check is the caller's: it needs the database.
 */
export function verifyRequestToken(
  token: string,
  appkeys: readonly string[],
  expected: RequestTokenRules,
): VerifiedRequestToken | undefined {
  const verified = verifyWithAny(token, appkeys, expected.clockTolerance);
  if (!verified) return undefined;
  const { payload: claims, signedWith } = verified;
  const { iss, sub, aud, jti, iat, exp } = claims;
  if (typeof jti !== 'string' || jti.length > MAX_JTI_LENGTH || !PRINTABLE.test(jti)) {
    throw refuse(`Request token must carry a jti of 1 to ${MAX_JTI_LENGTH} printable characters`);
  }
  if (typeof iat !== 'number' || typeof exp !== 'number') throw refuse('Request token must carry iat and exp');
  if (sub !== undefined && sub !== iss) throw refuse('Request token sub must equal iss');
  const audience = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
  if (audience !== undefined && !expected.audiences.includes(audience as string)) {
    throw refuse(`Request token aud must be the issuer${expected.audiences.length > 1 ? ' or the token endpoint' : ''} of this service`);
  }
  if (iat > nowSeconds() + expected.clockTolerance) throw refuse('Request token iat is in the future');
  if (exp - iat > expected.maxLifetimeSeconds) {
    throw refuse(`Request token lifetime (exp - iat) must be at most ${expected.maxLifetimeSeconds} seconds`);
  }
  return { claims: { appname: iss as string, jti, iat, exp }, signedWith };
}
