/**
 * Issue 22: real, unmodified OAuth client libraries against the running service (a child process
 * whose ISSUER is its own loopback URL), from discovery on the issuer URL through each grant and
 * client authentication method they have, refresh, revocation and introspection.
 *
 * openid-client and oauth4webapi are ESM-only and Jest runs CommonJS here, so each library runs in a
 * plain script (clients/*.mjs, clients/authlib_client.py) as a child process; the scripts print what
 * they got as JSON and these tests assert on it.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { INTEROP_DIR, runScript, startInteropService, type InteropService } from './support/service';
import { describeUnless } from '../helpers/skips';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON printed by the scripts

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SYSTEM_PYTHON = '/usr/bin/python3';

let service: InteropService;
const keys: Record<string, { appname: string; appkey: string }> = {};

/** The libraries' public clients, and one more that the oauth4webapi script's refusal names. */
const PUBLIC_CLIENTS = ['openid-client-cli', 'oauth4webapi-cli', 'oauth4webapi-cli-other', 'authlib-cli'];

beforeAll(async () => {
  service = await startInteropService({ PUBLIC_CLIENT_IDS: PUBLIC_CLIENTS.join(',') });
  // One API key (the OAuth client) per library, role viewer: its role grants api-keys:read, so it may introspect.
  for (const appname of ['openid-client', 'oauth4webapi', 'authlib']) keys[appname] = await service.createApiKey(appname, 'viewer');
}, 60_000);
afterAll(() => service?.cleanup());

/** What every script is given: the issuer, its API key, the user, and the public client_id its user logs in with. */
function clientEnv(library: string): Record<string, string> {
  const key = keys[library]!;
  return {
    ISSUER: service.issuer,
    AUDIENCE: service.issuer,
    APPNAME: key.appname,
    APPKEY: key.appkey,
    USERNAME: service.admin.username,
    PASSWORD: service.admin.password,
    PUBLIC_CLIENT_ID: `${library}-cli`,
  };
}

const runNodeClient = async (script: string, library: string, scenario: string) =>
  (await runScript<Json>(process.execPath, [path.join(INTEROP_DIR, 'clients', script), scenario], clientEnv(library))).result;

/** The claims every access token carries, for a principal of the service reached through `clientId`. */
const accessToken = (clientId: string, principal: 'user' | 'api_key', scope: string) =>
  expect.objectContaining({ iss: service.issuer, aud: service.issuer, client_id: clientId, principal_type: principal, scope, typ: 'Bearer' });

/** A client credentials response: an access token and no refresh or ID token (RFC 6749 §4.4.3). */
const clientCredentialsTokens = (appname: string) =>
  expect.objectContaining({
    token_type: 'bearer',
    scope: 'api-keys:read',
    access: accessToken(appname, 'api_key', 'api-keys:read'),
    refresh_token: false,
    id_token: null,
  });

/** An ID token as OpenID clients validate it: the client is its audience, never the access audience. */
const idToken = (clientId: string) =>
  expect.objectContaining({ iss: service.issuer, aud: clientId, azp: clientId, preferred_username: service.admin.username, sub: expect.any(String) });

describe('openid-client (v6)', () => {
  const run = (scenario: string) => runNodeClient('openid-client.mjs', 'openid-client', scenario);

  it('when it discovers from the issuer URL, then the metadata names this issuer, its endpoints, the four grants and the auth methods', async () => {
    const { metadata } = await run('discovery');

    expect(metadata).toEqual(
      expect.objectContaining({
        issuer: service.issuer,
        token_endpoint: `${service.issuer}/oauth2/token`,
        jwks_uri: `${service.issuer}/.well-known/jwks.json`,
        revocation_endpoint: `${service.issuer}/oauth2/revoke`,
        introspection_endpoint: `${service.issuer}/oauth2/introspect`,
        grant_types_supported: expect.arrayContaining(['password', 'refresh_token', 'client_credentials', JWT_BEARER]),
        token_endpoint_auth_methods_supported: expect.arrayContaining(['client_secret_basic', 'client_secret_post', 'client_secret_jwt']),
      }),
    );
  });

  it.each(['basic', 'post', 'jwt'])('when the API key gets client credentials with client_secret_%s, then an access token for that client', async (method) => {
    const { tokens, expiresIn } = await run(`client-credentials-${method}`);

    expect(tokens).toEqual(clientCredentialsTokens('openid-client'));
    expect(tokens.expires_in).toBe(300);
    // openid-client's expiresIn() counts from the response: a second may have passed by the time it is read.
    expect(expiresIn).toBeGreaterThanOrEqual(295);
    expect(expiresIn).toBeLessThanOrEqual(300);
  });

  it('when the secret is wrong, then it reports the 401 and its Basic challenge', async () => {
    const { refusal } = await run('client-credentials-wrong-secret');

    expect(refusal).toEqual(expect.objectContaining({ status: 401, challenges: ['basic'] }));
  });

  it('when a public client logs a user in by the password grant with openid, then it validates the ID token, refreshes twice, and a reused refresh token is invalid_grant', async () => {
    const { login, refreshed, again, reused } = await run('password-refresh');

    expect(login).toEqual(expect.objectContaining({ scope: 'openid api-keys:read', refresh_token: true, access: accessToken('openid-client-cli', 'user', 'openid api-keys:read') }));
    expect(login.validatedIdToken).toEqual(idToken('openid-client-cli'));
    expect(refreshed.session_state).toBe(login.session_state);
    expect(refreshed.validatedIdToken).toEqual(idToken('openid-client-cli'));
    expect(again).toEqual(expect.objectContaining({ refresh_token: true, session_state: login.session_state }));
    expect(reused).toEqual(expect.objectContaining({ status: 400, error: 'invalid_grant' }));
  });

  it('when it sends a request token as a jwt-bearer grant (aud the issuer, then the token endpoint), then tokens with a refresh token that refreshes', async () => {
    const { tokens, refreshed, tokenEndpointAudience } = await run('jwt-bearer');

    expect(tokens).toEqual(expect.objectContaining({ refresh_token: true, access: accessToken('openid-client', 'api_key', 'openid api-keys:read') }));
    expect(refreshed).toEqual(expect.objectContaining({ refresh_token: true, session_state: tokens.session_state }));
    expect(tokenEndpointAudience).toEqual(expect.objectContaining({ refresh_token: true }));
  });

  it('when it introspects with client_secret_basic and revokes, then live tokens are active, revoked ones not, and a wrong secret is 401', async () => {
    const result = await run('introspect-revoke');

    expect(result.accessBefore).toEqual(expect.objectContaining({ active: true, token_type: 'access_token', sid: result.sid, scope: 'openid api-keys:read', iss: service.issuer }));
    expect(result.refreshBefore).toEqual(expect.objectContaining({ active: true, token_type: 'refresh_token', sid: result.sid }));
    // Revoking the refresh token (tokenRevocation as the public client) ended the session.
    expect(result.accessAfter).toEqual({ active: false });
    expect(result.refreshAfter).toEqual(expect.objectContaining({ status: 400, error: 'invalid_grant' }));
    // Revoked with client_secret_basic.
    expect(result.ownAfter).toEqual({ active: false });
    expect(result.introspectWrongSecret).toEqual(expect.objectContaining({ status: 401, challenges: ['basic'] }));
  });
});

describe('oauth4webapi (v3)', () => {
  const run = (scenario: string) => runNodeClient('oauth4webapi.mjs', 'oauth4webapi', scenario);

  it('when it discovers from the issuer URL (RFC 8414, /.well-known/oauth-authorization-server), then processDiscoveryResponse accepts the metadata', async () => {
    const { metadata } = await run('discovery');

    expect(metadata).toEqual(expect.objectContaining({ issuer: service.issuer, token_endpoint: `${service.issuer}/oauth2/token` }));
  });

  it('when the API key gets client credentials with client_secret_basic, _post and _jwt, then an access token each time, and a wrong secret is invalid_client', async () => {
    const result = await run('client-credentials');

    for (const method of ['basic', 'post', 'jwt']) expect(result[method]).toEqual(clientCredentialsTokens('oauth4webapi'));
    expect(result.wrongSecret).toEqual(expect.objectContaining({ status: 401, error: 'invalid_client' }));
  });

  it('when a public client logs a user in by the password grant with openid and refreshes, then both ID tokens validate, and another client_id cannot redeem the refresh token', async () => {
    const { login, refreshed, otherClient } = await run('password-refresh');

    expect(login).toEqual(expect.objectContaining({ scope: 'openid api-keys:read', refresh_token: true, access: accessToken('oauth4webapi-cli', 'user', 'openid api-keys:read') }));
    expect(login.validatedIdToken).toEqual(idToken('oauth4webapi-cli'));
    expect(refreshed.validatedIdToken).toEqual(idToken('oauth4webapi-cli'));
    expect(refreshed.session_state).toBe(login.session_state);
    expect(otherClient).toEqual(expect.objectContaining({ status: 400, error: 'invalid_grant' }));
  });

  it('when it sends a request token (aud the token endpoint) as a jwt-bearer grant, then tokens that refresh, and the same assertion again is invalid_grant', async () => {
    const { tokens, refreshed, replayed } = await run('jwt-bearer');

    expect(tokens).toEqual(expect.objectContaining({ refresh_token: true, access: accessToken('oauth4webapi', 'api_key', 'openid api-keys:read') }));
    expect(refreshed).toEqual(expect.objectContaining({ refresh_token: true, session_state: tokens.session_state }));
    expect(replayed).toEqual(expect.objectContaining({ status: 400, error: 'invalid_grant' }));
  });

  it('when it introspects with client_secret_basic and revokes (public client, then client_secret_post), then revoked tokens are inactive, and a wrong secret is invalid_client', async () => {
    const result = await run('introspect-revoke');

    expect(result.before).toEqual(expect.objectContaining({ active: true, token_type: 'access_token', username: service.admin.username }));
    // Revoking the access token ended its session, refresh token included.
    expect(result.after).toEqual({ active: false });
    expect(result.refreshAfter).toEqual(expect.objectContaining({ status: 400, error: 'invalid_grant' }));
    expect(result.ownAfter).toEqual({ active: false });
    expect(result.wrongSecret).toEqual(expect.objectContaining({ status: 401, error: 'invalid_client' }));
  });

  it('when oauth4webapi validates tokens as an RFC 9068 resource server, then it accepts the access token (typ at+jwt) and refuses the ID token', async () => {
    const { accessToken: access, idToken: id } = await run('rfc9068-resource-server');

    expect(access).toEqual(expect.objectContaining({ ok: true }));
    expect(id).toEqual(expect.objectContaining({ ok: false }));
  });
});

/** /usr/bin/python3 with Debian's python3-authlib and python3-requests (the python3 on PATH may be another one). */
const authlibAvailable = spawnSync(SYSTEM_PYTHON, ['-c', 'import authlib, requests'], { stdio: 'ignore' }).status === 0;
const AUTHLIB_MISSING = `${SYSTEM_PYTHON} cannot import authlib and requests; install them with: apt-get install -y python3-authlib python3-requests`;

describeUnless(!authlibAvailable && process.env.CI !== 'true' && { what: 'the Authlib (Python) interop tests', why: AUTHLIB_MISSING })(
  authlibAvailable ? 'Authlib (Python, requests client)' : `Authlib (Python): ${AUTHLIB_MISSING}`,
  () => {
    const run = async (scenario: string) => {
      // In CI a missing Authlib fails here instead of skipping.
      if (!authlibAvailable) throw new Error(`CI=true: ${AUTHLIB_MISSING}`);
      return (await runScript<Json>(SYSTEM_PYTHON, [path.join(INTEROP_DIR, 'clients', 'authlib_client.py'), scenario], clientEnv('authlib'))).result;
    };

    it('when OAuth2Session gets client credentials with client_secret_basic, _post and _jwt (ClientSecretJWT), then an access token each time, and a wrong secret is invalid_client', async () => {
      const result = await run('client-credentials');

      for (const method of ['client_secret_basic', 'client_secret_post', 'client_secret_jwt']) expect(result[method]).toEqual(clientCredentialsTokens('authlib'));
      expect(result.wrong_secret).toEqual(expect.objectContaining({ error: 'invalid_client' }));
    });

    it('when OAuth2Session logs a user in by the password grant as a public client and refreshes, then tokens with an ID token for it, and the spent refresh token is invalid_grant', async () => {
      const { login, refreshed, reused } = await run('password-refresh');

      expect(login).toEqual(expect.objectContaining({ scope: 'openid api-keys:read', refresh_token: true, access: accessToken('authlib-cli', 'user', 'openid api-keys:read'), id_token: idToken('authlib-cli') }));
      expect(refreshed).toEqual(expect.objectContaining({ session_state: login.session_state, refresh_token: true, id_token: idToken('authlib-cli') }));
      expect(reused).toEqual(expect.objectContaining({ error: 'invalid_grant' }));
    });

    it('when AssertionSession sends a jwt-bearer grant (HS256 with the appkey, aud the token endpoint), then tokens with a refresh token', async () => {
      const { tokens } = await run('jwt-bearer');

      expect(tokens).toEqual(expect.objectContaining({ refresh_token: true, access: accessToken('authlib', 'api_key', 'openid api-keys:read') }));
    });

    it('when it introspects and revokes with client_secret_basic, then the token is active, then not, and a wrong secret is 401 invalid_client', async () => {
      const result = await run('introspect-revoke');

      expect(result.before).toEqual(expect.objectContaining({ active: true, token_type: 'access_token' }));
      expect(result.revoke_status).toBe(200);
      expect(result.after).toEqual({ active: false });
      expect(result.refresh_after).toEqual(expect.objectContaining({ error: 'invalid_grant' }));
      expect(result.wrong_secret).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) });
    });
  },
);
