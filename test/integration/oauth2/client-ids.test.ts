import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, createUser, type TestApiKey, type TestUser } from '../../helpers/factories';
import { expectOAuthError } from '../../helpers/errors';
import { claimsOf } from '../../helpers/tokens';
import { basic, sessionCount, tokenRequest } from './support';

describe('client_id is checked on the password and refresh grants (Hardening, round two)', () => {
  let t: TestApp;
  let key: TestApiKey;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'ops-cli, web-app' });
    key = await createApiKey(t, { role: 'viewer' });
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const password = (extra: Record<string, string> = {}) => tokenRequest(t, { grant_type: 'password', ...user, ...extra });

  it.each([
    ['no client_id', {}, 'public'],
    ['DEFAULT_CLIENT_ID', { client_id: 'public' }, 'public'],
    ['a client of PUBLIC_CLIENT_IDS', { client_id: 'web-app' }, 'web-app'],
    ["the console's own client", { client_id: 'console' }, 'console'],
  ])('when a password login names %s, then it is accepted for that client', async (_what, extra, clientId) => {
    const res = await password(extra);

    expect(res.status).toBe(200);
    expect(claimsOf(res.body.access_token).client_id).toBe(clientId);
  });

  it('when a password login names a client the service does not know, then 401 invalid_client and no session opens', async () => {
    const before = await sessionCount(t);

    const res = await password({ client_id: 'made-up-client', scope: 'openid' });

    expectOAuthError(res, 401, 'invalid_client');
    expect(await sessionCount(t)).toBe(before);
  });

  it("when a password login names an API key's appname without its secret, then 401 invalid_client; with its secret, the key is the client", async () => {
    const unauthenticated = await password({ client_id: key.appname });
    const authenticated = await password({ client_id: key.appname, client_secret: key.appkey });

    expectOAuthError(unauthenticated, 401, 'invalid_client');
    expect(authenticated.status).toBe(200);
    expect(claimsOf(authenticated.body.access_token).client_id).toBe(key.appname);
  });

  it('when an empty Basic password names an unknown client, then 401 invalid_client with the Basic challenge', async () => {
    const res = await tokenRequest(t, { grant_type: 'password', ...user }, { authorization: basic('made-up-client', '') });

    expectOAuthError(res, 401, 'invalid_client', { basicChallenge: true });
  });

  it('when a refresh names an unknown client, then 401 invalid_client, and the refresh token is not spent', async () => {
    const login = await password({ client_id: 'ops-cli' });

    const refused = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token, client_id: 'made-up-client' });
    const own = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: login.body.refresh_token, client_id: 'ops-cli' });

    expectOAuthError(refused, 401, 'invalid_client');
    expect(own.status).toBe(200);
  });
});

describe('a client id equal to AUDIENCE is refused at the endpoint (Hardening, round two)', () => {
  let t: TestApp;
  let key: TestApiKey;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ AUDIENCE: 'resource-api' });
    key = await createApiKey(t, { role: 'viewer', appname: 'resource-api' });
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it('when an API key named like AUDIENCE authenticates as the client of a password login asking for openid, then 401 invalid_client: no ID token with the audience of access tokens', async () => {
    const res = await tokenRequest(t, { grant_type: 'password', ...user, scope: 'openid', client_id: key.appname, client_secret: key.appkey });

    expectOAuthError(res, 401, 'invalid_client');
  });
});
