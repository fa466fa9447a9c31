import { createHmac, timingSafeEqual } from 'node:crypto';
import { LoginRefusedError } from '../shared/errors';
import type { LoginFailureReason } from '../shared/errors';
import { nowSeconds } from '../signing-keys/token-signer';
import { APPNAME_PATTERN } from '../shared/names';
import { decodeSegment } from '../crypto/jws-segments';

/** The HMAC algorithms a request token may be signed with, and the digest of each. */
const DIGESTS = new Map([
  ['HS256', 'sha256'],
  ['HS384', 'sha384'],
  ['HS512', 'sha512'],
]);
// Three base64url segments, the signature possibly empty (then refused): the compact JWS form.
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
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

/** A compact JWS split and decoded, not verified. */
interface DecodedToken {
  header: Record<string, unknown>;
  /** Undefined when the payload is not a JSON object. */
  claims: Record<string, unknown> | undefined;
  signingInput: string;
  signature: string;
}

/** Undefined when the token is not a compact JWS whose header is a JSON object. */
function decode(token: string): DecodedToken | undefined {
  if (!COMPACT_JWS.test(token)) return undefined;
  const [encodedHeader, encodedPayload, signature] = token.split('.') as [string, string, string];
  const header = decodeSegment(encodedHeader);
  if (!header) return undefined;
  return { header, claims: decodeSegment(encodedPayload), signingInput: `${encodedHeader}.${encodedPayload}`, signature };
}

const digestOf = (header: Record<string, unknown>) => (typeof header.alg === 'string' ? DIGESTS.get(header.alg) : undefined);

/** The appname a request token claims to come from (`iss`), read before any verification. */
export function claimedAppname(token: string): string {
  const decoded = decode(token);
  if (!decoded?.claims) throw refuse('Request token is not a valid JWT', 'malformed_request_token');
  if (digestOf(decoded.header) === undefined) throw refuse('Request token must be signed with HS256, HS384 or HS512', 'malformed_request_token');
  // RFC 7515: a token naming header extensions as critical must be refused by whoever does not know them, as here.
  if (decoded.header.crit !== undefined) throw refuse('Request token must not carry crit', 'malformed_request_token');
  const iss = decoded.claims.iss;
  // Unverified input about to reach a query: only a possible appname goes further.
  if (typeof iss !== 'string' || !APPNAME_PATTERN.test(iss)) throw refuse('Request token must carry the appname as iss', 'malformed_request_token');
  return iss;
}

/** The signature as the one canonical base64url encoding of the HMAC, compared in constant time. */
function hmacHolds(decoded: DecodedToken, digest: string, appkey: string): boolean {
  const expected = Buffer.from(createHmac(digest, appkey).update(decoded.signingInput).digest('base64url'));
  const given = Buffer.from(decoded.signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** nbf and exp, each optional but a number when present, judged with the leeway. */
function judgeTimes(claims: Record<string, unknown>, clockTolerance: number): void {
  const now = nowSeconds();
  const { nbf, exp } = claims;
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + clockTolerance)) throw refuse('Invalid request token');
  if (exp !== undefined && typeof exp !== 'number') throw refuse('Invalid request token');
  if (exp !== undefined && now >= exp + clockTolerance) throw refuse('Request token has expired', 'expired_request_token');
}

/** Signature, algorithm, nbf and exp, against each appkey in turn; the first that signed the token wins, or undefined if none did. */
function verifyWithAny(token: string, appkeys: readonly string[], clockTolerance: number) {
  const decoded = decode(token);
  const digest = decoded && digestOf(decoded.header);
  if (!decoded || digest === undefined || decoded.signature === '') throw refuse('Invalid request token');
  for (let i = 0; i < appkeys.length; i++) {
    // Only a wrong signature is worth trying the next appkey: the rest does not depend on the key.
    if (!hmacHolds(decoded, digest, appkeys[i]!)) continue;
    const claims = decoded.claims ?? {};
    judgeTimes(claims, clockTolerance);
    return { claims, signedWith: i };
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
  const { claims, signedWith } = verified;
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
