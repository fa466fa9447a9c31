import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, type TestApiKey, type TestUser } from '../../helpers/factories';
import { claimsOf, signRequestToken } from '../../helpers/tokens';

const TOKEN = '/oauth2/token';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('POST /oauth2/token: each grant once, end to end', () => {
  let t: TestApp;
  let user: TestUser;
  let key: TestApiKey;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'cli,other' });
    user = await createUser(t, { role: 'editor' });
    key = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it('when a named client logs in with a password asking for openid and a narrower scope, then the tokens carry exactly that scope, the client, and an ID token for it', async () => {
    const res = await t.http().post(TOKEN).type('form').send({ grant_type: 'password', ...user, scope: 'openid api-keys:read', client_id: 'cli' });

    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.scope).toBe('openid api-keys:read');
    expect(claimsOf(res.body.access_token)).toEqual(expect.objectContaining({ client_id: 'cli', scope: 'openid api-keys:read', aud: t.config.audience }));
    expect(claimsOf(res.body.id_token)).toEqual(expect.objectContaining({ aud: 'cli', azp: 'cli', sub: claimsOf(res.body.access_token).sub }));
    const create = await t.http().post('/api/v1/api-keys').set(bearer(res.body.access_token)).send({ appname: `x${Date.now()}`, roles: [] });
    expect(create.status).toBe(403);
  });

  it('when the refresh token is redeemed at the token endpoint, then a new pair in the same session, the ID token kept', async () => {
    const login = await t.http().post(TOKEN).type('form').send({ grant_type: 'password', ...user, scope: 'openid api-keys:read', client_id: 'cli' });

    const res = await t.http().post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: login.body.refresh_token, client_id: 'cli' });
    const elsewhere = await t.http().post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: res.body.refresh_token, client_id: 'other' });

    expect(res.status).toBe(200);
    expect(res.body['session-state']).toBe(login.body['session-state']);
    expect(res.body.id_token).toEqual(expect.any(String));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toEqual(expect.objectContaining({ error: 'invalid_grant', status: 400, name: 'BadRequest' }));
  });

  it('when an API key authenticates with Basic for client credentials, then an access token and no refresh or ID token', async () => {
    const res = await t.http().post(TOKEN).set('Authorization', basic(key.appname, key.appkey)).type('form').send({ grant_type: 'client_credentials' });
    const wrong = await t.http().post(TOKEN).set('Authorization', basic(key.appname, `${key.appkey}x`)).type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'not-before-policy', 'scope', 'session-state', 'token_type']);
    expect(claimsOf(res.body.access_token)).toEqual(expect.objectContaining({ client_id: key.appname, principal_type: 'api_key' }));
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic/);
    expect(wrong.body).toEqual(expect.objectContaining({ error: 'invalid_client', status: 401, name: 'Unauthorized' }));
  });

  it('when a request token is the jwt-bearer assertion, living an hour, then tokens with a refresh token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const assertion = signRequestToken(key.appname, key.appkey, { claims: { iat: now, exp: now + 3600, aud: `${t.config.issuer}${TOKEN}` } });

    const res = await t.http().post(TOKEN).type('form').send({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
    const replayed = await t.http().post(TOKEN).type('form').send({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });

    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toEqual(expect.any(String));
    expect(replayed.body).toEqual(expect.objectContaining({ error: 'invalid_grant' }));
  });

  it('when a parameter is sent twice or the grant is unknown, then invalid_request and unsupported_grant_type', async () => {
    const twice = await t.http().post(TOKEN).type('form').send('grant_type=password&username=a&username=b&password=x');
    const unknown = await t.http().post(TOKEN).type('form').send({ grant_type: 'authorization_code', code: 'x' });

    expect(twice.body).toEqual(expect.objectContaining({ status: 400, error: 'invalid_request' }));
    expect(unknown.body).toEqual(expect.objectContaining({ status: 400, error: 'unsupported_grant_type' }));
  });
});
