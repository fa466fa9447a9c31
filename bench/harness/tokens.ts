import { createHmac, randomUUID } from 'node:crypto';

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');
const HS256_HEADER = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

/**
 * A fresh request token (unique jti) signed HS256 with the appkey, as a client builds it. Hand-rolled
 * so the load generator spends a few microseconds per request, not the servers' budget.
 */
export function requestToken(appname: string, appkey: string, claims: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = b64url(JSON.stringify({ iss: appname, iat: now, exp: now + 60, jti: randomUUID(), ...claims }));
  const signature = createHmac('sha256', appkey).update(`${HS256_HEADER}.${payload}`).digest('base64url');
  return `${HS256_HEADER}.${payload}.${signature}`;
}

/** A client_secret_jwt client assertion (RFC 7523 §3): a request token with `sub` = the client and `aud` = the server's issuer. */
export const clientAssertion = (appname: string, appkey: string, audience: string) => requestToken(appname, appkey, { sub: appname, aud: audience });
