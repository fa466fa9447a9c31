import { createHmac, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Response } from 'supertest';
import type { TestApp } from '../../helpers/app';
import { bearer } from '../../helpers/factories';

/** The issuer startTestApp configures. */
export const ISSUER = 'http://issuer.test';

export const PATHS = {
  apiKeyToken: '/api/v1/auth/token',
  passwordToken: '/api/auth/bearer/token',
  refresh: '/api/auth/bearer/refresh',
  jwks: '/.well-known/jwks.json',
  /** A bearer-protected route any role may call. */
  protectedRoute: '/api/v1/api-keys',
} as const;

/** Exactly the nine fields of the token response object, with the contract's fixed values. */
export function expectTokenResponse(res: Response, expected: { accessTtl: number }): void {
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toEqual({
    access_token: expect.any(String),
    expires_in: expected.accessTtl,
    refresh_expires_in: expect.any(Number),
    refresh_token: expect.any(String),
    token_type: 'bearer',
    id_token: expect.any(String),
    'not-before-policy': 0,
    'session-state': expect.any(String),
    scope: expect.any(String),
  });
  expect(Number.isInteger(res.body.refresh_expires_in)).toBe(true);
}

/** Calls a bearer-protected route with the token. */
export function callProtected(t: TestApp, token: string) {
  return t.http().get(PATHS.protectedRoute).set(bearer(token));
}

export function refreshWith(t: TestApp, refreshToken: string) {
  return t.http().post(PATHS.refresh).type('form').send({ refresh_token: refreshToken });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Waits until `ms` milliseconds before the next whole second of the wall clock. */
export function sleepUntilBeforeNextSecond(ms: number): Promise<unknown> {
  const untilBoundary = 1000 - (Date.now() % 1000);
  return sleep((untilBoundary - ms + 1000) % 1000);
}

/** Request-token claims as a well-behaved client builds them. */
export function requestClaims(appname: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = nowSeconds();
  return { iss: appname, iat: now, exp: now + 60, jti: randomUUID(), ...overrides };
}

/** A token signed with an asymmetric key the caller owns (RS256 / ES256). */
export function signAsymmetric(claims: Record<string, unknown>, algorithm: 'RS256' | 'ES256', kid?: string): string {
  const { privateKey } =
    algorithm === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return jwt.sign(claims, privateKey, { algorithm, noTimestamp: true, ...(kid ? { keyid: kid } : {}) });
}

/** An HMAC-SHA256 JWT built by hand, so any secret (a public key, say) can be used. */
export function forgeHs256(header: Record<string, unknown>, claims: Record<string, unknown>, secret: string | Buffer): string {
  const encode = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${encode({ ...header, alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

export interface Jwk {
  kid: string;
  [field: string]: unknown;
}

/** The published JWK Set. */
export async function fetchJwks(t: TestApp): Promise<{ keys: Jwk[] }> {
  const res = await t.http().get(PATHS.jwks);
  expect(res.status).toBe(200);
  return res.body as { keys: Jwk[] };
}

/** The published public key for a kid, as a KeyObject. */
export async function publicKeyFor(t: TestApp, kid: string): Promise<KeyObject> {
  const jwk = (await fetchJwks(t)).keys.find((k) => k.kid === kid);
  if (!jwk) throw new Error(`kid ${kid} is not published`);
  return createPublicKey({ key: { ...jwk } as never, format: 'jwk' });
}

/** The decoded header of a JWT, unverified. */
export function headerOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
