import { createLocalJWKSet, jwtVerify } from 'jose';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, createUser, loginAs, loginWithApiKey } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';
import { ISSUER, PATHS } from './support';

const PRIVATE_JWK_FIELDS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

describe('GET /.well-known/jwks.json', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('when fetched without a token, then 200 with a JWK Set of public EC P-256 keys, each with a kid', async () => {
    const res = await t.http().get(PATHS.jwks);

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/(jwk-set\+)?json/);
    expect(res.body).toEqual({ keys: expect.any(Array) });
    expect(res.body.keys.length).toBeGreaterThanOrEqual(1);
    for (const jwk of res.body.keys) {
      expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String) });
    }
  });

  it('when the JWK Set is read, then no key carries a private field', async () => {
    const res = await t.http().get(PATHS.jwks);

    const leaked = res.body.keys.flatMap((jwk: Record<string, unknown>) => PRIVATE_JWK_FIELDS.filter((f) => f in jwk));
    expect(leaked).toEqual([]);
  });

  it('when a third party verifies a user access token with jose against the JWK Set, then it verifies for the issuer and audience', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const login = await loginAs(t, user);
    const jwks = createLocalJWKSet((await t.http().get(PATHS.jwks)).body);

    const { payload, protectedHeader } = await jwtVerify(login.access_token, jwks, {
      issuer: ISSUER,
      audience: ISSUER,
      algorithms: ['ES256'],
    });

    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ preferred_username: user.username, sid: login['session-state'], typ: 'Bearer' });
  });

  it('when a third party verifies an API key access token with jose, then it verifies too', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const login = await loginWithApiKey(t, key);
    const jwks = createLocalJWKSet((await t.http().get(PATHS.jwks)).body);

    const { payload } = await jwtVerify(login.access_token, jwks, { issuer: ISSUER, audience: ISSUER, algorithms: ['ES256'] });

    expect(payload).toMatchObject({ preferred_username: key.appname, principal_type: 'api_key' });
  });

  it('when the JWK Set is requested with POST, then 405 with the uniform error body', async () => {
    const res = await t.http().post(PATHS.jwks);

    expectError(res, 405, 'MethodNotAllowed');
  });
});
