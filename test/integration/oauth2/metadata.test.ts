import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { tokenRequest } from './support';

const ISSUER = 'http://issuer.test';

/**
 * The names registered for authorization server metadata (IANA "OAuth Authorization Server
 * Metadata": RFC 8414, OpenID Connect Discovery 1.0 and later RFCs).
 */
const REGISTERED = new Set([
  // RFC 8414
  'issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri', 'registration_endpoint', 'scopes_supported',
  'response_types_supported', 'response_modes_supported', 'grant_types_supported', 'token_endpoint_auth_methods_supported',
  'token_endpoint_auth_signing_alg_values_supported', 'service_documentation', 'ui_locales_supported', 'op_policy_uri', 'op_tos_uri',
  'revocation_endpoint', 'revocation_endpoint_auth_methods_supported', 'revocation_endpoint_auth_signing_alg_values_supported',
  'introspection_endpoint', 'introspection_endpoint_auth_methods_supported', 'introspection_endpoint_auth_signing_alg_values_supported',
  'code_challenge_methods_supported', 'signed_metadata',
  // OpenID Connect Discovery 1.0
  'userinfo_endpoint', 'acr_values_supported', 'subject_types_supported', 'id_token_signing_alg_values_supported',
  'id_token_encryption_alg_values_supported', 'id_token_encryption_enc_values_supported', 'userinfo_signing_alg_values_supported',
  'userinfo_encryption_alg_values_supported', 'userinfo_encryption_enc_values_supported', 'request_object_signing_alg_values_supported',
  'request_object_encryption_alg_values_supported', 'request_object_encryption_enc_values_supported', 'display_values_supported',
  'claim_types_supported', 'claims_supported', 'claims_locales_supported', 'claims_parameter_supported', 'request_parameter_supported',
  'request_uri_parameter_supported', 'require_request_uri_registration', 'end_session_endpoint',
  // RFC 8628, 8705, 9126, 9449, 9207
  'device_authorization_endpoint', 'tls_client_certificate_bound_access_tokens', 'mtls_endpoint_aliases',
  'pushed_authorization_request_endpoint', 'require_pushed_authorization_requests', 'dpop_signing_alg_values_supported',
  'authorization_response_iss_parameter_supported',
]);

describe('authorization server metadata (RFC 8414) and OpenID Connect discovery', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'cli' });
    user = await createUser(t, { role: 'admin' });
  });
  afterAll(() => t.close());

  const fetchBoth = async () => Promise.all([t.http().get('/.well-known/oauth-authorization-server'), t.http().get('/.well-known/openid-configuration')]);

  it('when both well-known paths are fetched without a token, then both answer 200 with the same document', async () => {
    const [rfc8414, openid] = await fetchBoth();

    expect(rfc8414.status).toBe(200);
    expect(openid.status).toBe(200);
    expect(rfc8414.headers['content-type']).toMatch(/^application\/json/);
    expect(rfc8414.body).toEqual(openid.body);
  });

  it('when the document is read, then it names the issuer, the three OAuth 2.0 endpoints, the five grants and the ways to authenticate', async () => {
    const [{ body }] = await fetchBoth();

    expect(body).toEqual(
      expect.objectContaining({
        issuer: ISSUER,
        jwks_uri: `${ISSUER}/.well-known/jwks.json`,
        token_endpoint: `${ISSUER}/oauth2/token`,
        revocation_endpoint: `${ISSUER}/oauth2/revoke`,
        introspection_endpoint: `${ISSUER}/oauth2/introspect`,
        response_types_supported: [],
        id_token_signing_alg_values_supported: ['ES256'],
      }),
    );
    expect([...body.grant_types_supported].sort()).toEqual([
      'client_credentials',
      'password',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
    expect([...body.scopes_supported].sort()).toEqual(['api-keys:admin', 'api-keys:read', 'api-keys:write', 'openid']);
    expect([...body.token_endpoint_auth_methods_supported].sort()).toEqual(['client_secret_basic', 'client_secret_jwt', 'client_secret_post', 'none']);
    expect([...body.token_endpoint_auth_signing_alg_values_supported].sort()).toEqual(['HS256', 'HS384', 'HS512']);
    expect([...body.revocation_endpoint_auth_methods_supported].sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    expect([...body.introspection_endpoint_auth_methods_supported].sort()).toEqual(['client_secret_basic', 'client_secret_post']);
  });

  it('when its member names are checked against the IANA registry, then every one is registered: no private extensions', async () => {
    const [{ body }] = await fetchBoth();

    const unregistered = Object.keys(body).filter((name) => !REGISTERED.has(name));

    expect(unregistered).toEqual([]);
  });

  it('when the claims of a real access token and ID token are compared with claims_supported, then each is listed', async () => {
    const [{ body }] = await fetchBoth();

    const login = await tokenRequest(t, { grant_type: 'password', ...user, scope: 'openid api-keys:read', client_id: 'cli' });

    const claims = [...Object.keys(claimsOf(login.body.access_token)), ...Object.keys(claimsOf(login.body.id_token))];
    expect(body.claims_supported).toEqual(expect.arrayContaining([...new Set(claims)]));
  });

  it('when the discovered token endpoint is used with a supported grant, then it issues tokens the discovered issuer signed', async () => {
    const [{ body }] = await fetchBoth();

    const res = await t.http().post(new URL(body.token_endpoint).pathname).type('form').send({ grant_type: 'password', ...user });

    expect(res.status).toBe(200);
    expect(claimsOf(res.body.access_token).iss).toBe(body.issuer);
  });
});
