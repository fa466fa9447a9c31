import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs, type TestUser } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';
import { ISSUER } from '../auth/support';
import { OAUTH } from './support';

/**
 * The discovery document names URLs under the configured issuer (http://issuer.test), as a real
 * deployment would; the test server listens elsewhere, so each URL is resolved against it.
 */
const onTestServer = (t: TestApp, url: string) => new URL(new URL(url).pathname, t.baseUrl);

describe('GET /.well-known/openid-configuration (discovery)', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it('when the document is fetched without a token, then 200 with the issuer, its endpoints and what it supports', async () => {
    const res = await t.http().get(OAUTH.discovery);

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(res.body).toEqual({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      token_endpoint: `${ISSUER}/oauth2/token`,
      revocation_endpoint: `${ISSUER}/oauth2/revoke`,
      introspection_endpoint: `${ISSUER}/oauth2/introspect`,
      grant_types_supported: [
        'password',
        'refresh_token',
        'client_credentials',
        'urn:ietf:params:oauth:grant-type:jwt-bearer',
        'urn:ietf:params:oauth:grant-type:token-exchange',
      ],
      response_types_supported: [],
      subject_types_supported: ['public'],
      scopes_supported: ['openid', 'api-keys:read', 'api-keys:write', 'api-keys:admin'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'none'],
      token_endpoint_auth_signing_alg_values_supported: ['HS256', 'HS384', 'HS512'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      id_token_signing_alg_values_supported: ['ES256'],
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'RS256'],
      claims_supported: expect.arrayContaining(['iss', 'sub', 'aud', 'azp', 'exp', 'iat', 'jti', 'sid', 'scope', 'roles', 'client_id', 'preferred_username']),
    });
  });

  it('when the RFC 8414 path is fetched, then it serves the same document', async () => {
    const openid = await t.http().get(OAUTH.discovery);
    const rfc8414 = await t.http().get('/.well-known/oauth-authorization-server');

    expect(rfc8414.status).toBe(200);
    expect(rfc8414.body).toEqual(openid.body);
  });

  it('when every access token claim is compared with claims_supported, then each is listed', async () => {
    const { body } = await t.http().get(OAUTH.discovery);
    const login = await loginAs(t, user);
    const claims = Object.keys(JSON.parse(Buffer.from(login.access_token.split('.')[1]!, 'base64url').toString('utf8')));

    expect(body.claims_supported).toEqual(expect.arrayContaining(claims));
  });

  it('when the discovered endpoints are called, then each is the route it names', async () => {
    const { body } = await t.http().get(OAUTH.discovery);
    const path = (url: string) => onTestServer(t, url).pathname;

    const token = await t.http().post(path(body.token_endpoint)).type('form').send({ grant_type: 'password', ...user });
    const refreshed = await t.http().post(path(body.token_endpoint)).type('form').send({ grant_type: 'refresh_token', refresh_token: token.body.refresh_token });
    const revoked = await t.http().post(path(body.revocation_endpoint)).type('form').send({ token: refreshed.body.refresh_token });
    const introspected = await t.http().post(path(body.introspection_endpoint)).type('form').send({ token: 'garbage' });
    const jwks = await t.http().get(path(body.jwks_uri));

    expect(token.status).toBe(200);
    expect(refreshed.status).toBe(200);
    expect(revoked.status).toBe(200);
    expectError(introspected, 401, 'Unauthorized');
    expect(jwks.body.keys.length).toBeGreaterThan(0);
  });

  it('when a resource server uses jose with the discovered jwks_uri and issuer, then it verifies an access token', async () => {
    const { body: discovered } = await t.http().get(OAUTH.discovery);
    const jwks = createRemoteJWKSet(onTestServer(t, discovered.jwks_uri));
    const login = await loginAs(t, user);

    const { payload, protectedHeader } = await jwtVerify(login.access_token, jwks, {
      issuer: discovered.issuer,
      audience: discovered.issuer,
      algorithms: discovered.id_token_signing_alg_values_supported,
    });

    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ iss: ISSUER, aud: ISSUER, typ: 'Bearer', scope: 'openid api-keys:read', preferred_username: user.username });
  });

  it('when a tampered access token is checked the same way, then jose refuses it', async () => {
    const { body: discovered } = await t.http().get(OAUTH.discovery);
    const jwks = createRemoteJWKSet(onTestServer(t, discovered.jwks_uri));
    const [header, payload, signature] = (await loginAs(t, user)).access_token.split('.');
    const altered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), scope: 'openid api-keys:admin' })).toString('base64url');

    await expect(jwtVerify(`${header}.${altered}.${signature}`, jwks, { issuer: discovered.issuer, audience: discovered.issuer })).rejects.toThrow(
      /signature verification failed/,
    );
  });

  it('when the route is called with POST, then 405 with Allow: GET', async () => {
    const res = await t.http().post(OAUTH.discovery);

    expectError(res, 405, 'MethodNotAllowed');
    expect(res.headers.allow).toBe('GET');
  });
});
