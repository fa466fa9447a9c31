import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { auth, requiredScopes } from 'express-oauth2-jwt-bearer';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import { type TestApp, startTwoInstances } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { bearer, createApiKey, createUser, loginWithApiKey, tokenForRole, type TestApiKey, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { eventsWhere, newAdmin } from '../audit/support';
import { ISSUER } from '../auth/support';

/**
 * A resource server as a user of the service builds one, checking tokens offline: express-oauth2-jwt-bearer
 * with the service's issuer, JWK Set and audience, and a route that requires `api-keys:admin`.
 */
async function startResourceServer(jwksUri: string): Promise<{ url: string; server: Server }> {
  const app = express();
  const checked = auth({ issuer: ISSUER, jwksUri, audience: ISSUER });
  app.get('/admin-only', checked, requiredScopes('api-keys:admin'), (_req, res) => void res.json({ ok: true }));
  app.get('/readers', checked, requiredScopes('api-keys:read'), (_req, res) => void res.json({ ok: true }));
  app.use((err: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(err.status ?? 500).end());
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The token endpoint on instance `t`. */
const tokenEndpoint = (t: TestApp, body: Record<string, string>) => t.http().post('/oauth2/token').type('form').send(body);
const basic = (key: TestApiKey) => `Basic ${Buffer.from(`${key.appname}:${key.appkey}`).toString('base64')}`;

onSharedServerOnly()('scopes follow the role at once, on every instance (Hardening, round two)', () => {
  let a: TestApp;
  let b: TestApp;
  let rs: { url: string; server: Server };
  let adminToken: string;
  const resource = (path: string, token: string) => fetch(`${rs.url}${path}`, { headers: bearer(token) }).then((res) => res.status);

  beforeAll(async () => {
    [a, b] = await startTwoInstances();
    rs = await startResourceServer(`${a.baseUrl}/.well-known/jwks.json`);
    adminToken = await tokenForRole(a, 'admin');
  });
  afterAll(async () => {
    rs?.server.close();
    await b?.close();
    await a?.close();
  });

  it('when an admin key is demoted to viewer on one instance, then its sessions end, and its next tokens from the other instance, refreshed ones too, carry only api-keys:read and a resource server requiring api-keys:admin answers 403', async () => {
    const key = await createApiKey(a, { role: 'admin' });
    // Instance b has seen the key as an admin: it keeps what it read of it.
    const before = await loginWithApiKey(b, key);
    expect((await tokenEndpoint(b, { grant_type: 'client_credentials', scope: 'api-keys:admin' }).set('Authorization', basic(key))).status).toBe(200);
    expect(await resource('/admin-only', before.access_token)).toBe(200);

    const demoted = await a.http().put(`/api/v1/api-keys/${key.appname}`).set(bearer(adminToken)).send({ description: 'demoted', roles: ['viewer'] });

    expect(demoted.status).toBe(200);
    expect((await b.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: before.refresh_token })).status).toBe(401);
    expect((await b.http().get('/api/v1/api-keys').set(bearer(before.access_token))).status).toBe(401);
    const after = await loginWithApiKey(b, key);
    const refreshed = await b.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: after.refresh_token });
    expect(refreshed.status).toBe(200);
    for (const token of [after.access_token, refreshed.body.access_token as string]) {
      expect(claimsOf(token)).toMatchObject({ scope: 'openid api-keys:read', roles: ['viewer'] });
      expect(await resource('/admin-only', token)).toBe(403);
      expect(await resource('/readers', token)).toBe(200);
    }
    const asked = await tokenEndpoint(b, { grant_type: 'client_credentials', scope: 'api-keys:admin' }).set('Authorization', basic(key));
    expect(asked.status).toBe(400);
    expect(asked.body.error).toBe('invalid_scope');
    const revoked = await eventsWhere(a, (await newAdmin(a)).token, { appname: key.appname, type: 'session.revoked' });
    expect(revoked.map((e) => e.details.reason)).toEqual(expect.arrayContaining(['role_changed']));
  });

  it('when a key is raised, then its sessions live on', async () => {
    const key = await createApiKey(a, { role: 'viewer' });
    const login = await loginWithApiKey(b, key);

    await a.http().put(`/api/v1/api-keys/${key.appname}`).set(bearer(adminToken)).send({ description: 'raised', roles: ['editor'] });

    const refreshed = await b.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: login.refresh_token });
    expect(refreshed.status).toBe(200);
    expect(claimsOf(refreshed.body.access_token as string)).toMatchObject({ scope: 'openid api-keys:read api-keys:write', roles: ['editor'] });
  });

  it('when an admin user is demoted on one instance, then a password login on the other, within its five minutes of kept logins, gets only what a viewer may, and asking for api-keys:admin is invalid_scope', async () => {
    const user: TestUser = await createUser(a, { role: 'admin' });
    const password = (scope?: string) => tokenEndpoint(b, { grant_type: 'password', username: user.username, password: user.password, ...(scope && { scope }) });
    // Instance b keeps the user it checked the password of.
    expect((await password('openid api-keys:admin')).status).toBe(200);

    await a.services.users.setRole(user.username, 'viewer', CLI_CONTEXT);

    const asked = await password('openid api-keys:admin');
    expect(asked.status).toBe(400);
    expect(asked.body.error).toBe('invalid_scope');
    const plain = await password();
    expect(plain.status).toBe(200);
    const refreshed = await tokenEndpoint(b, { grant_type: 'refresh_token', refresh_token: plain.body.refresh_token as string });
    for (const token of [plain.body.access_token as string, refreshed.body.access_token as string]) {
      expect(claimsOf(token)).toMatchObject({ scope: 'openid api-keys:read', roles: ['viewer'] });
      expect(await resource('/admin-only', token)).toBe(403);
    }
  });

  it('when a key is demoted on one instance, then its appkey as a client secret on the other can no longer introspect with the old role', async () => {
    const key = await createApiKey(a, { role: 'viewer' });
    const introspect = () => b.http().post('/oauth2/introspect').type('form').set('Authorization', basic(key)).send({ token: 'anything' });
    expect((await introspect()).status).toBe(200);

    await a.http().put(`/api/v1/api-keys/${key.appname}`).set(bearer(adminToken)).send({ description: 'no role', roles: [] });

    expect((await introspect()).status).toBe(403);
  });

  it('when a key is regenerated on one instance, then its old appkey as a client secret is refused at once on the other, which had kept it', async () => {
    const key = await createApiKey(a, { role: 'viewer' });
    const introspect = () => b.http().post('/oauth2/introspect').type('form').set('Authorization', basic(key)).send({ token: 'anything' });
    expect((await introspect()).status).toBe(200);

    const regen = await a.http().put(`/api/v1/api-keys/${key.appname}/regen`).set(bearer(adminToken)).send({ description: 'rolled', roles: ['viewer'] });

    expect(regen.status).toBe(200);
    const refused = await introspect();
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');
  });
});
