import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, createUser, type TestApiKey, type TestUser } from '../../helpers/factories';
import { expectOAuthError } from '../../helpers/errors';
import { claimsOf } from '../../helpers/tokens';
import { assertionOf, basic, CLIENT_ASSERTION_TYPE, eventsOf, nowSeconds, sessionOf, stateOf, tokenRequest, type Encoding } from './support';

const CLIENT_CREDENTIALS = { grant_type: 'client_credentials' } as const;

describe('POST /oauth2/token: client authentication (RFC 6749 §2.3, RFC 7523 §2.2)', () => {
  let t: TestApp;
  let key: TestApiKey;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: `my-cli,my:cli/ent+1%~,${'c'.repeat(62)}!~` });
    key = await createApiKey(t, { role: 'viewer' });
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const withAssertion = (claims: Record<string, unknown> = {}, extra: Record<string, string> = {}) =>
    tokenRequest(t, { ...CLIENT_CREDENTIALS, client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertionOf(key, claims), ...extra });

  describe('the API key as a confidential client', () => {
    it('when the appname and appkey come as Basic credentials (client_secret_basic), then tokens for the key', async () => {
      const res = await tokenRequest(t, CLIENT_CREDENTIALS, { authorization: basic(key.appname, key.appkey) });

      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token)).toEqual(expect.objectContaining({ client_id: key.appname, preferred_username: key.appname }));
    });

    it('when the Basic user name and password are form-url-encoded beyond need (every character), then they are decoded and accepted', async () => {
      const encodedAll = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');
      const authorization = `Basic ${Buffer.from(`${encodedAll(key.appname)}:${encodedAll(key.appkey)}`).toString('base64')}`;

      const res = await tokenRequest(t, CLIENT_CREDENTIALS, { authorization });

      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token).client_id).toBe(key.appname);
    });

    it.each<Encoding>(['form', 'json'])('when they come in the %s body (client_secret_post), then tokens for the key', async (as) => {
      const res = await tokenRequest(t, { ...CLIENT_CREDENTIALS, client_id: key.appname, client_secret: key.appkey }, { as });

      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token).client_id).toBe(key.appname);
    });

    it.each([
      ['the issuer', () => t.config.issuer],
      ['the token endpoint URL', () => 'http://issuer.test/oauth2/token'],
      ['absent', () => undefined],
    ])('when a client assertion (client_secret_jwt) has aud %s, then tokens for the key', async (_, aud) => {
      const res = await withAssertion({ aud: aud() });

      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token).client_id).toBe(key.appname);
    });

    it('when a client assertion lives 3600 s, as client libraries send it, and names its client_id, then it is accepted', async () => {
      const iat = nowSeconds();

      const res = await withAssertion({ iat, exp: iat + 3600 }, { client_id: key.appname });

      expect(res.status).toBe(200);
    });

    it('when a password login is authenticated as an API key client, then the tokens are for that client', async () => {
      const res = await tokenRequest(t, { grant_type: 'password', ...user, scope: 'openid' }, { authorization: basic(key.appname, key.appkey) });

      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token)).toEqual(expect.objectContaining({ client_id: key.appname, preferred_username: user.username }));
      expect(claimsOf(res.body.id_token)).toEqual(expect.objectContaining({ aud: key.appname, azp: key.appname }));
    });
  });

  describe('client assertions that are refused', () => {
    it.each([
      ['lives 3601 s', () => ({ iat: nowSeconds(), exp: nowSeconds() + 3601 })],
      ['has no jti', () => ({ jti: undefined })],
      ['has another aud', () => ({ aud: 'https://elsewhere.example' })],
      ['is signed by another key', () => ({ iss: 'other-app' })],
      ['has expired', () => ({ iat: nowSeconds() - 120, exp: nowSeconds() - 60 })],
    ])('when the assertion %s, then 401 invalid_client, nothing changes, and login.failed is recorded', async (_, claims) => {
      const before = await stateOf(t);

      const res = await withAssertion(claims());

      expectOAuthError(res, 401, 'invalid_client');
      expect(await stateOf(t)).toEqual(before);
      expect(await eventsOf(t, res)).toEqual([expect.objectContaining({ type: 'login.failed', actor: 'anonymous' })]);
    });

    it('when an accepted assertion is sent again, then 401 invalid_client and no second session', async () => {
      const assertion = assertionOf(key, { exp: nowSeconds() + 3600 });
      const body = { ...CLIENT_CREDENTIALS, client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertion };
      expect((await tokenRequest(t, body)).status).toBe(200);
      const before = await stateOf(t);

      const replayed = await tokenRequest(t, body);

      expectOAuthError(replayed, 401, 'invalid_client');
      expect(await stateOf(t)).toEqual(before);
      expect(await eventsOf(t, replayed)).toEqual([expect.objectContaining({ type: 'login.failed', appname: key.appname, details: expect.objectContaining({ reason: 'replayed_request_token' }) })]);
    });

    it('when the assertion names another client_id than its own, then 401 invalid_client', async () => {
      const other = await createApiKey(t, { role: 'viewer' });

      const res = await withAssertion({}, { client_id: other.appname });

      expectOAuthError(res, 401, 'invalid_client');
    });

    it('when client_assertion_type is wrong or client_assertion is missing, then 400 invalid_request', async () => {
      const wrongType = await tokenRequest(t, { ...CLIENT_CREDENTIALS, client_assertion_type: 'urn:example:other', client_assertion: assertionOf(key) });
      const missing = await tokenRequest(t, { ...CLIENT_CREDENTIALS, client_assertion_type: CLIENT_ASSERTION_TYPE });

      expectOAuthError(wrongType, 400, 'invalid_request');
      expectOAuthError(missing, 400, 'invalid_request');
    });
  });

  describe('public clients: a client_id without a secret', () => {
    it('when the client_secret is empty, then there is no client authentication: the login is for the public client named by client_id', async () => {
      const res = await tokenRequest(t, { grant_type: 'password', ...user, client_id: 'my-cli', client_secret: '' });

      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token).client_id).toBe('my-cli');
      expect((await sessionOf(t, res.body['session-state']))?.client_id).toBe('my-cli');
    });

    it('when Basic credentials have an empty password, then the same: a public client named by the Basic user name, form-url-decoded', async () => {
      const clientId = 'my:cli/ent+1%~';

      const res = await tokenRequest(t, { grant_type: 'password', ...user, scope: 'openid' }, { authorization: basic(clientId, '') });

      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token).client_id).toBe(clientId);
      expect(claimsOf(res.body.id_token).aud).toBe(clientId);
    });

    it('when client_credentials comes with a public client only, then 401 invalid_client, as client credentials need authentication', async () => {
      const before = await stateOf(t);

      const res = await tokenRequest(t, { ...CLIENT_CREDENTIALS, client_id: key.appname, client_secret: '' });

      expectOAuthError(res, 401, 'invalid_client');
      expect(await stateOf(t)).toEqual(before);
    });

    it('when client_credentials comes with Basic credentials with an empty password, then 401 invalid_client with a Basic challenge', async () => {
      const res = await tokenRequest(t, CLIENT_CREDENTIALS, { authorization: basic(key.appname, '') });

      expectOAuthError(res, 401, 'invalid_client', { basicChallenge: true });
    });

    it('when Basic credentials with an empty password come beside a client_secret in the body, then the body’s secret is checked: wrong refused, right accepted', async () => {
      const authorization = basic(key.appname, '');

      const wrong = await tokenRequest(t, { ...CLIENT_CREDENTIALS, client_id: key.appname, client_secret: `${key.appkey}x` }, { authorization });
      const right = await tokenRequest(t, { ...CLIENT_CREDENTIALS, client_secret: key.appkey }, { authorization });

      expectOAuthError(wrong, 401, 'invalid_client');
      expect(right.status).toBe(200);
      expect(claimsOf(right.body.access_token).client_id).toBe(key.appname);
    });

    it('when a client_id is 64 visible ASCII characters, then it is accepted', async () => {
      const res = await tokenRequest(t, { grant_type: 'password', ...user, client_id: `${'c'.repeat(62)}!~` });

      expect(res.status).toBe(200);
    });
  });

  describe('malformed client authentication', () => {
    it.each([
      ['Basic and client_secret', { client_secret: 'x' }, true],
      ['client_secret and client_assertion', { client_id: 'x', client_secret: 'y', client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: 'a.b.c' }, false],
      ['Basic and client_assertion', { client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: 'a.b.c' }, true],
      ['Basic and a body client_id naming another client', { client_id: 'another-app' }, true],
    ])('when %s come at once, then 400 invalid_request and nothing changes', async (_, extra, withBasic) => {
      const before = await stateOf(t);

      const res = await tokenRequest(t, { ...CLIENT_CREDENTIALS, ...extra }, withBasic ? { authorization: basic(key.appname, key.appkey) } : {});

      expectOAuthError(res, 400, 'invalid_request');
      expect(await stateOf(t)).toEqual(before);
    });

    it.each([
      ['65 characters', 'c'.repeat(65)],
      ['a space', 'my cli'],
      ['a non-ASCII character', 'clié'],
    ])('when client_id has %s, then 400 invalid_request and no session', async (_, clientId) => {
      const before = await stateOf(t);

      const res = await tokenRequest(t, { grant_type: 'password', ...user, client_id: clientId });

      expectOAuthError(res, 400, 'invalid_request');
      expect(await stateOf(t)).toEqual(before);
    });

    it('when the Basic credentials are not base64 of id:secret, then 401 invalid_client with a Basic challenge', async () => {
      const res = await tokenRequest(t, CLIENT_CREDENTIALS, { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` });

      expectOAuthError(res, 401, 'invalid_client', { basicChallenge: true });
    });
  });
});
