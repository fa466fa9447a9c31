import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';

export interface RequestTokenOptions {
  /** Claims to add or replace; a claim set to undefined is left out. */
  claims?: Record<string, unknown>;
  algorithm?: jwt.Algorithm;
  /** Header fields to add beside alg and typ. */
  header?: Record<string, unknown>;
}

/** A request token as a client builds it: iss = appname, iat, exp, jti; signed HS256 with the appkey. */
export function signRequestToken(appname: string, appkey: string, options: RequestTokenOptions = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { iss: appname, iat: now, exp: now + 60, jti: randomUUID(), ...options.claims };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  // jsonwebtoken adds iat unless told not to; a test that leaves iat out means it.
  const algorithm = options.algorithm ?? 'HS256';
  const header = options.header && ({ alg: algorithm, typ: 'JWT', ...options.header } as jwt.JwtHeader);
  return jwt.sign(claims, appkey, { algorithm, noTimestamp: !('iat' in claims), ...(header && { header }) });
}

/** One segment of a compact JWS: a JSON value, or a payload given as text exactly as it is to be sent. */
const segment = (value: object | string) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A token signed HS256 with `secret` exactly as given, for claims or a payload a JWT library would refuse to sign. */
export function hmacSignedToken(payload: Record<string, unknown> | string, secret: string): string {
  const signingInput = `${segment({ alg: 'HS256', typ: 'JWT' })}.${segment(payload)}`;
  return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
}

/** An unsigned token (`alg: none`) with the given claims. */
export function unsignedToken(claims: Record<string, unknown>): string {
  return `${segment({ alg: 'none', typ: 'JWT' })}.${segment(claims)}.`;
}

/** The decoded payload of a JWT, unverified. */
export function claimsOf(token: string): Record<string, unknown> {
  return jwt.decode(token) as Record<string, unknown>;
}

/** The token's claims, signed ES256 by a key the service does not own, under `kid` (the token's own kid unless given). */
export function signedByForeignKey(token: string, kid?: string): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyid = kid ?? jwt.decode(token, { complete: true })?.header.kid;
  return jwt.sign(claimsOf(token), privateKey, { algorithm: 'ES256', noTimestamp: true, ...(keyid ? { keyid } : {}) });
}
