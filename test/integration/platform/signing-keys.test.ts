import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { TokenResponse } from '../../../src/tokens/tokens.responses';
import request from 'supertest';
import { buildApp } from '../../../src/app';
import { NO_RATE_LIMITS } from '../../../src/http/rate-limits';
import { createServices } from '../../../src/services';
import { startTestApp, type TestApp } from '../../helpers/app';
import { itOnSharedServerOnly } from '../../helpers/database';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey } from '../../helpers/factories';

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

describe('signing key rotation', () => {
  let t: TestApp;
  let before: TokenResponse;
  let beforeKey: TokenResponse;
  let after: TokenResponse;
  let oldKid: string | undefined;
  let newKid: string;

  beforeAll(async () => {
    t = await startTestApp();
    const user = await createUser(t, { role: 'viewer' });
    before = await loginAs(t, user);
    beforeKey = await loginWithApiKey(t, await createApiKey(t, { role: 'viewer' }));
    oldKid = kidOf(before.access_token);

    newKid = await t.services.signingKeys.rotate();
    after = await loginAs(t, user);
  });
  afterAll(() => t.close());

  it('when keys are rotated, then tokens issued afterwards carry the new kid and earlier ones the old kid', () => {
    expect(oldKid).toEqual(expect.any(String));
    expect(newKid).not.toBe(oldKid);
    expect(kidOf(after.access_token)).toBe(newKid);
    expect(kidOf(after.id_token)).toBe(newKid);
    expect(kidOf(before.access_token)).toBe(oldKid);
  });

  it('when keys are rotated, then refresh tokens are unaffected: they are HMAC-signed by this service for itself, with no kid', () => {
    for (const token of [before.refresh_token, after.refresh_token]) {
      expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    }
  });

  it('when keys are rotated, then the JWK Set lists both the old and the new public key, without private parts', async () => {
    const res = await t.http().get('/.well-known/jwks.json');

    expect(res.status).toBe(200);
    const kids = (res.body.keys as { kid: string }[]).map((k) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([oldKid, newKid]));
    for (const key of res.body.keys as Record<string, unknown>[]) {
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(key).not.toHaveProperty('d');
    }
  });

  it('when an access token signed by the previous key is used, then it still authenticates', async () => {
    const res = await t.http().get('/api/v1/api-keys').set(bearer(before.access_token));

    expect(res.status).toBe(200);
  });

  it('when an API-key access token signed by the previous key is used, then it still authenticates', async () => {
    const res = await t.http().get('/api/v1/api-keys').set(bearer(beforeKey.access_token));

    expect(res.status).toBe(200);
  });

  it('when an access token signed by the new key is used, then it authenticates', async () => {
    const res = await t.http().get('/api/v1/api-keys').set(bearer(after.access_token));

    expect(res.status).toBe(200);
  });

  it('when a refresh token issued before the rotation is presented, then it is accepted and the new pair uses the new kid', async () => {
    const res = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: beforeKey.refresh_token });

    expect(res.status).toBe(200);
    expect(kidOf(res.body.access_token)).toBe(newKid);
  });

  it('when another service verifies old and new tokens offline against the published JWK Set, then both verify', async () => {
    const jwks = createLocalJWKSet((await t.http().get('/.well-known/jwks.json')).body);

    for (const token of [before.access_token, after.access_token]) {
      const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: t.config.issuer, audience: t.config.issuer });
      expect(protectedHeader.alg).toBe('ES256');
      expect(payload.typ).toBe('Bearer');
    }
  });

  it('when keys are rotated twice, then the newest kid signs and the JWK Set still lists every key whose tokens may be live', async () => {
    const third = await t.services.signingKeys.rotate();
    const user = await createUser(t, { role: 'viewer' });

    const tokens = await loginAs(t, user);
    const kids = ((await t.http().get('/.well-known/jwks.json')).body.keys as { kid: string }[]).map((k) => k.kid);

    expect(kidOf(tokens.access_token)).toBe(third);
    expect(kids).toEqual(expect.arrayContaining([oldKid, newKid, third]));
    expect((await t.http().get('/api/v1/api-keys').set(bearer(before.access_token))).status).toBe(200);
  });

  itOnSharedServerOnly()('when one instance rotates, then another instance sharing the database accepts tokens signed with the new key', async () => {
    const services = createServices(t.config, t.db, t.masterKey);
    await services.signingKeys.initialise();
    const otherInstance = buildApp({ config: t.config, logger: t.logger, services, rateLimits: NO_RATE_LIMITS });
    // Let the other instance's key cache age past its reload throttle, as it would between rotations.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const rotatedKid = await t.services.signingKeys.rotate();
    const tokens = await loginAs(t, await createUser(t, { role: 'viewer' }));

    const res = await request(otherInstance).get('/api/v1/api-keys').set(bearer(tokens.access_token));

    expect(kidOf(tokens.access_token)).toBe(rotatedKid);
    expect(res.status).toBe(200);
  });
});
