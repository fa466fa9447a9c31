import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, randomName, type TestApiKey, type TestUser } from '../../helpers/factories';
import { expectOAuthError } from '../../helpers/errors';
import { claimsOf } from '../../helpers/tokens';
import { assertionOf, JWT_BEARER, OAUTH2, post, sessionOf, stateOf, tokenRequest } from './support';

const ALL = 'openid api-keys:read api-keys:write api-keys:admin';

describe('POST /oauth2/token: scope (RFC 6749 §3.3), least privilege on the key API', () => {
  let t: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  let adminKey: TestApiKey;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await createUser(t, { role: 'admin' });
    viewer = await createUser(t, { role: 'viewer' });
    adminKey = await createApiKey(t, { role: 'admin' });
  });
  afterAll(() => t.close());

  const passwordLogin = (user: TestUser, scope?: string) => tokenRequest(t, { grant_type: 'password', ...user, ...(scope !== undefined && { scope }) });
  const refresh = (refreshToken: string, scope?: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, ...(scope !== undefined && { scope }) });
  const createKey = (accessToken: string, role: string | null = null) =>
    t.http().post('/api/v1/api-keys').set(bearer(accessToken)).send({ appname: randomName('scoped'), roles: role ? [role] : [] });
  const listKeys = (accessToken: string) => t.http().get('/api/v1/api-keys').set(bearer(accessToken));
  /** What /oauth2/introspect says of a token, asked by an admin with the full scope. */
  async function introspected(token: string): Promise<Record<string, unknown>> {
    const caller = await passwordLogin(admin);
    return (await post(t, OAUTH2.introspect, { token }, { authorization: `Bearer ${caller.body.access_token}` })).body;
  }

  describe('what may be asked', () => {
    it('when no scope is asked, then the token carries the role’s full scope, for a user and for a key', async () => {
      const user = await passwordLogin(admin);
      const key = await tokenRequest(t, { grant_type: 'client_credentials', client_id: adminKey.appname, client_secret: adminKey.appkey });

      expect([user.body.scope, claimsOf(user.body.access_token).scope]).toEqual([ALL, ALL]);
      expect([key.body.scope, claimsOf(key.body.access_token).scope]).toEqual([ALL, ALL]);
      expect((await sessionOf(t, user.body['session-state']))?.scope).toBeNull();
    });

    it.each([['api-keys:read'], ['openid api-keys:read'], ['api-keys:write openid'], ['openid']])(
      'when an admin asks for “%s”, then the token carries exactly that scope',
      async (scope) => {
        const res = await passwordLogin(admin, scope);

        expect(res.status).toBe(200);
        expect(res.body.scope).toBe(scope);
        expect(claimsOf(res.body.access_token).scope).toBe(scope);
      },
    );

    it('when a user without a role asks for openid, then it is granted: openid is always allowed', async () => {
      const res = await passwordLogin(await createUser(t, { role: null }), 'openid');

      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('openid');
    });

    it.each<[string, () => Promise<Record<string, string>>]>([
      ['a viewer asks for api-keys:write', async () => ({ grant_type: 'password', ...viewer, scope: 'openid api-keys:write' })],
      ['a viewer asks for an unknown scope', async () => ({ grant_type: 'password', ...viewer, scope: 'api-keys:read profile' })],
      ['a key asks beyond its role', async () => {
        const key = await createApiKey(t, { role: 'editor' });
        return { grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey, scope: 'api-keys:admin' };
      }],
      ['a jwt-bearer login asks beyond its role', async () => {
        const key = await createApiKey(t, { role: 'viewer' });
        return { grant_type: JWT_BEARER, assertion: assertionOf(key), scope: 'api-keys:write' };
      }],
      ['the scope is malformed', async () => ({ grant_type: 'password', ...admin, scope: 'openid "api-keys:read"' })],
    ])('when %s, then 400 invalid_scope and nothing changes', async (_, bodyOf) => {
      const body = await bodyOf();
      const before = await stateOf(t);

      const res = await tokenRequest(t, body);

      expectOAuthError(res, 400, 'invalid_scope');
      expect(await stateOf(t)).toEqual(before);
    });
  });

  describe('refresh', () => {
    it('when a refresh asks no scope, then it keeps the session’s scope', async () => {
      const login = await passwordLogin(admin, 'openid api-keys:read');

      const res = await refresh(login.body.refresh_token);

      expect(res.body.scope).toBe('openid api-keys:read');
      expect(claimsOf(res.body.access_token).scope).toBe('openid api-keys:read');
    });

    it('when a refresh asks a narrower scope, then the new tokens and the session are narrowed, and later refreshes keep the narrower one', async () => {
      const login = await passwordLogin(admin);

      const narrowed = await refresh(login.body.refresh_token, 'api-keys:read');
      const later = await refresh(narrowed.body.refresh_token);

      expect(narrowed.body.scope).toBe('api-keys:read');
      expect(later.body.scope).toBe('api-keys:read');
      expect((await createKey(later.body.access_token)).status).toBe(403);
      expect((await introspected(later.body.access_token)).scope).toBe('api-keys:read');
    });

    it('when a refresh asks a wider scope, then 400 invalid_scope, nothing changes, and the refresh token still works', async () => {
      const login = await passwordLogin(admin, 'openid api-keys:read');
      const before = await stateOf(t);

      const res = await refresh(login.body.refresh_token, 'openid api-keys:read api-keys:write');

      expectOAuthError(res, 400, 'invalid_scope');
      expect(await stateOf(t)).toEqual(before);
      const after = await refresh(login.body.refresh_token);
      expect(after.status).toBe(200);
      expect(after.body.scope).toBe('openid api-keys:read');
    });
  });

  describe('key operations need both the role and the scope', () => {
    it('when an admin’s token has scope api-keys:read, then it lists keys but cannot create one (403), and introspection reports that scope', async () => {
      const login = await passwordLogin(admin, 'api-keys:read');

      const list = await listKeys(login.body.access_token);
      const create = await createKey(login.body.access_token);

      expect(list.status).toBe(200);
      expect(create.status).toBe(403);
      expect(await introspected(login.body.access_token)).toEqual(expect.objectContaining({ active: true, scope: 'api-keys:read', username: admin.username }));
    });

    it('when an admin’s token lacks api-keys:admin, then it manages keys up to editor but not admin keys, nor reads the audit trail', async () => {
      const login = await passwordLogin(admin, 'openid api-keys:read api-keys:write');

      const editorKey = await createKey(login.body.access_token, 'editor');
      const adminKeyCreate = await createKey(login.body.access_token, 'admin');
      const audit = await t.http().get('/api/v1/audit-events').set(bearer(login.body.access_token));

      expect(editorKey.status).toBe(201);
      expect(adminKeyCreate.status).toBe(403);
      expect(audit.status).toBe(403);
    });

    it('when an admin key logs in by client_credentials with scope api-keys:read, then it cannot create a key', async () => {
      const res = await tokenRequest(t, { grant_type: 'client_credentials', client_id: adminKey.appname, client_secret: adminKey.appkey, scope: 'api-keys:read' });

      const create = await createKey(res.body.access_token);

      expect(res.body.scope).toBe('api-keys:read');
      expect(create.status).toBe(403);
    });

    it('when a viewer asks only for openid, then even listing keys is forbidden', async () => {
      const login = await passwordLogin(viewer, 'openid');

      const list = await listKeys(login.body.access_token);

      expect(list.status).toBe(403);
    });
  });
});
