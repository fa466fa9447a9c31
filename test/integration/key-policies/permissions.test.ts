import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, loginWithApiKey, tokenForRole } from '../../helpers/factories';
import { claimsOf, signRequestToken } from '../../helpers/tokens';
import { JWT_BEARER, createKeyWithPolicy, putPolicy } from './support';
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE } from '../exchange-dpop/support';

/** Contract, "Key policies", "Permissions in tokens". */
describe('key policies: permissions in tokens', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const clientCredentials = (key: { appname: string; appkey: string }, scope?: string) =>
    t
      .http()
      .post('/oauth2/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey, ...(scope !== undefined && { scope }) });

  it('when a key has permissions, then its tokens carry them in scope after the role\'s scopes, on every grant', async () => {
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read', 'reports'] }, 'editor');

    const route = await loginWithApiKey(t, key);
    const cc = await clientCredentials(key);
    const jwtBearer = await t.http().post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion: signRequestToken(key.appname, key.appkey) });

    const full = 'openid api-keys:read api-keys:write billing:read reports';
    expect(route.scope).toBe(full);
    expect(claimsOf(route.access_token).scope).toBe(full);
    expect(cc.body.scope).toBe(full);
    expect(jwtBearer.body.scope).toBe(full);
  });

  it('when a token asks for some of the permissions, then it carries exactly those, and a refresh keeps or narrows them', async () => {
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read', 'billing:write'] }, 'viewer');

    const narrowed = await t
      .http()
      .post('/oauth2/token')
      .type('form')
      .send({ grant_type: JWT_BEARER, assertion: signRequestToken(key.appname, key.appkey), scope: 'billing:read' });
    const kept = await t.http().post('/oauth2/token').type('form').send({ grant_type: 'refresh_token', refresh_token: narrowed.body.refresh_token });
    const widened = await t
      .http()
      .post('/oauth2/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: kept.body.refresh_token, scope: 'billing:read billing:write' });

    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('billing:read');
    expect(kept.body.scope).toBe('billing:read');
    expect(widened.status).toBe(400);
    expect(widened.body.error).toBe('invalid_scope');
  });

  it('when a token asks for a permission the key lacks, then invalid_scope, and nothing is spent', async () => {
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read'], credits: { remaining: 3 } });

    const res = await clientCredentials(key, 'billing:write');

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
    const { rows } = await t.db.query<{ remaining: string }>('SELECT credits_remaining AS remaining FROM api_keys WHERE appname = $1', [key.appname]);
    expect(Number(rows[0]!.remaining)).toBe(3);
  });

  it('when a permission is taken from the key, then a refresh no longer grants it, and introspection says so', async () => {
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read', 'reports'] });
    const tokens = await loginWithApiKey(t, key);

    await putPolicy(t, key.appname, { permissions: ['reports'] });
    const refreshed = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: tokens.refresh_token });
    const introspected = await t
      .http()
      .post('/oauth2/introspect')
      .set(bearer(await tokenForRole(t, 'admin')))
      .type('form')
      .send({ token: refreshed.body.access_token });

    expect(refreshed.body.scope).toBe('openid api-keys:read reports');
    expect(introspected.body.scope).toBe('openid api-keys:read reports');
  });

  it('when a key\'s token is exchanged (RFC 8693), then the new token keeps the permissions the subject token carries, and may narrow them', async () => {
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read', 'reports'] });
    const subject = (await clientCredentials(key)).body.access_token as string;
    const exchange = (scope?: string) =>
      t
        .http()
        .post('/oauth2/token')
        .type('form')
        .send({ grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE, ...(scope !== undefined && { scope }) });

    const whole = await exchange();
    const narrowed = await exchange('billing:read');

    expect(whole.status).toBe(200);
    expect(whole.body.scope).toBe('openid api-keys:read billing:read reports');
    expect(narrowed.body.scope).toBe('billing:read');
  });

  it('when discovery is read, then scopes_supported lists the role scopes only (permissions are per key)', async () => {
    await createKeyWithPolicy(t, { permissions: ['billing:read'] });

    const res = await t.http().get('/.well-known/openid-configuration');

    expect(res.body.scopes_supported).toEqual(['openid', 'api-keys:read', 'api-keys:write', 'api-keys:admin']);
  });
});
