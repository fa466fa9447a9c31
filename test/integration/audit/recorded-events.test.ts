import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, randomName, tokenForRole } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { refreshWith } from '../auth/support';
import { revoke } from '../oauth/support';
import { KEYS, keyPath, readKey, regenPath } from '../api-keys/support';
import { eventsOfRequest, eventsWhere, LOOPBACK, newAdmin, type Admin } from './support';

describe('the audit trail records each security event', () => {
  let t: TestApp;
  let admin: Admin;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await newAdmin(t);
  });
  afterAll(() => t.close());

  /** Who made a request over HTTP, as every event of an HTTP request shows it. */
  const fromThisRequest = (res: { headers: Record<string, string> }) => ({
    id: expect.any(Number),
    occurred_at: expect.any(String),
    client_address: expect.stringMatching(LOOPBACK),
    request_id: res.headers['x-request-id'],
  });

  /** The policy of a key created without one, as api_key.created records it (contract, "Key policies"). */
  const defaultPolicy = {
    expires_at: null,
    enabled: true,
    allowed_addresses: [],
    permissions: [],
    rate_limit: null,
    credits: null,
    max_idle_days: null,
    created_at: expect.any(Number),
    last_used: null,
    disabled_reason: null,
  };

  describe('API key changes', () => {
    it('when an admin creates a key, then api_key.created names the admin, the key, its role, the address and the request id', async () => {
      const appname = randomName('app');

      const res = await t.http().post(KEYS).set(bearer(admin.token)).send({ appname, roles: ['editor'] });

      expect(res.status).toBe(201);
      expect(await eventsWhere(t, admin.token, { appname })).toEqual([
        {
          ...fromThisRequest(res),
          type: 'api_key.created',
          actor: `user:${admin.username}`,
          appname,
          username: null,
          details: { role: 'editor', policy: defaultPolicy },
        },
      ]);
    });

    it('when a key with the admin role creates a key, then the actor is api_key:<its appname>', async () => {
      const creator = await createApiKey(t, { role: 'admin' });
      const { access_token: token } = await loginWithApiKey(t, creator);
      const appname = randomName('app');

      const res = await t.http().post(KEYS).set(bearer(token)).send({ appname, roles: [] });

      expect(res.status).toBe(201);
      expect(await eventsWhere(t, admin.token, { appname })).toEqual([
        expect.objectContaining({ type: 'api_key.created', actor: `api_key:${creator.appname}`, appname, details: { role: null, policy: defaultPolicy } }),
      ]);
    });

    it('when an admin updates a key, then api_key.updated shows the role before and after', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await t.http().put(keyPath(key.appname)).set(bearer(admin.token)).send({ description: 'new', roles: ['editor'] });

      expect(res.status).toBe(200);
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.updated' })).toEqual([
        {
          ...fromThisRequest(res),
          type: 'api_key.updated',
          actor: `user:${admin.username}`,
          appname: key.appname,
          username: null,
          details: { role_before: 'viewer', role_after: 'editor' },
        },
      ]);
    });

    it('when a key is regenerated without grace, then api_key.regenerated shows the roles, no grace and the sessions that ended', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      await loginWithApiKey(t, key);
      await loginWithApiKey(t, key);

      const res = await t.http().put(regenPath(key.appname)).set(bearer(admin.token)).send({ roles: ['admin'] });

      expect(res.status).toBe(200);
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.regenerated' })).toEqual([
        {
          ...fromThisRequest(res),
          type: 'api_key.regenerated',
          actor: `user:${admin.username}`,
          appname: key.appname,
          username: null,
          details: { role_before: 'viewer', role_after: 'admin', grace_seconds: 0, previous_key_valid_until: null, sessions_revoked: 2 },
        },
      ]);
    });

    it('when a key is regenerated with a grace, then the event shows when the old appkey stops working and that no session ended', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      await loginWithApiKey(t, key);
      const startedAt = Date.now();

      const res = await t.http().put(regenPath(key.appname)).query({ grace_seconds: 300 }).set(bearer(admin.token)).send({ roles: ['viewer'] });

      expect(res.status).toBe(200);
      const [event, ...others] = await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.regenerated' });
      expect(others).toEqual([]);
      expect(event!.details).toEqual({
        role_before: 'viewer',
        role_after: 'viewer',
        grace_seconds: 300,
        previous_key_valid_until: expect.any(String),
        sessions_revoked: 0,
      });
      const validUntil = Date.parse(event!.details.previous_key_valid_until as string);
      expect(validUntil).toBeGreaterThanOrEqual(startedAt + 300_000 - 5_000);
      expect(validUntil).toBeLessThanOrEqual(Date.now() + 300_000 + 5_000);
    });

    it('when a key is regenerated again during a grace, then sessions_revoked counts the sessions of the appkey whose grace ends now', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      await loginWithApiKey(t, key);
      const first = await t.http().put(regenPath(key.appname)).query({ grace_seconds: 300 }).set(bearer(admin.token)).send({ roles: ['viewer'] });
      await loginWithApiKey(t, { appname: key.appname, appkey: first.body.data.appkey });

      const res = await t.http().put(regenPath(key.appname)).query({ grace_seconds: 300 }).set(bearer(admin.token)).send({ roles: ['viewer'] });

      expect(res.status).toBe(200);
      const events = await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.regenerated' });
      expect(events.map((e) => e.details.sessions_revoked)).toEqual([1, 0]);
    });

    it('when a key is deleted, then api_key.deleted shows its role, and the key’s earlier events remain listed', async () => {
      const appname = randomName('app');
      await t.http().post(KEYS).set(bearer(admin.token)).send({ appname, roles: ['admin'] }).expect(201);

      const res = await t.http().delete(keyPath(appname)).set(bearer(admin.token));

      expect(res.status).toBe(204);
      expect(await eventsWhere(t, admin.token, { appname })).toEqual([
        {
          ...fromThisRequest(res),
          type: 'api_key.deleted',
          actor: `user:${admin.username}`,
          appname,
          username: null,
          details: { role: 'admin' },
        },
        expect.objectContaining({ type: 'api_key.created', appname }),
      ]);
    });

    it('when the caller sends a well-formed X-Request-Id, then the event carries that id', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const requestId = randomName('audit-trace');

      const res = await t.http().put(keyPath(key.appname)).set(bearer(admin.token)).set('X-Request-Id', requestId).send({ roles: ['viewer'] });

      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toBe(requestId);
      expect((await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.updated' }))[0]!.request_id).toBe(requestId);
    });
  });

  describe('a refused change records nothing', () => {
    it('when an editor tries to update an admin key, then 403 and no api_key.updated is recorded', async () => {
      const key = await createApiKey(t, { role: 'admin' });
      const editor = await tokenForRole(t, 'editor');

      const res = await t.http().put(keyPath(key.appname)).set(bearer(editor)).send({ roles: ['viewer'] });

      expect(res.status).toBe(403);
      expect(await eventsWhere(t, admin.token, { appname: key.appname })).toEqual([expect.objectContaining({ type: 'api_key.created' })]);
      expect((await readKey(t, key.appname)).body.data.roles).toEqual(['admin']);
    });

    it('when an editor tries to delete an admin key, then 403 and no api_key.deleted is recorded', async () => {
      const key = await createApiKey(t, { role: 'admin' });
      const editor = await tokenForRole(t, 'editor');

      const res = await t.http().delete(keyPath(key.appname)).set(bearer(editor));

      expect(res.status).toBe(403);
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.deleted' })).toEqual([]);
      expect((await readKey(t, key.appname)).status).toBe(200);
    });

    it('when an unknown key is regenerated, then 404 and no event names it', async () => {
      const appname = randomName('missing');

      const res = await t.http().put(regenPath(appname)).set(bearer(admin.token)).send({ roles: [] });

      expect(res.status).toBe(404);
      expect(await eventsWhere(t, admin.token, { appname })).toEqual([]);
    });

    it('when a key is created twice, then 409 for the second and only one api_key.created is recorded', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await t.http().post(KEYS).set(bearer(admin.token)).send({ appname: key.appname, roles: ['admin'] });

      expect(res.status).toBe(409);
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.created' })).toEqual([
        expect.objectContaining({ details: { role: 'viewer', policy: defaultPolicy } }),
      ]);
    });

    it('when an update body is invalid, then 400 and no api_key.updated is recorded', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await t.http().put(keyPath(key.appname)).set(bearer(admin.token)).send({ roles: ['root'] });

      expect(res.status).toBe(400);
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.updated' })).toEqual([]);
    });
  });

  describe('tokens', () => {
    it('when an API key exchanges a request token, then token.issued names the key, the route and the session, from the address last_ip shows', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) });

      expect(res.status).toBe(200);
      const { last_ip: lastIp } = (await readKey(t, key.appname)).body.data;
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'token.issued' })).toEqual([
        {
          ...fromThisRequest(res),
          client_address: lastIp,
          type: 'token.issued',
          actor: `api_key:${key.appname}`,
          appname: key.appname,
          username: null,
          details: { route: '/api/v1/auth/token', session_id: res.body['session-state'] },
        },
      ]);
    });

    it('when a user logs in with a password, then token.issued names the user, the route and the session', async () => {
      const user = await createUser(t, { role: 'viewer' });

      const res = await t.http().post('/api/auth/bearer/token').type('form').send(user);

      expect(res.status).toBe(200);
      expect(await eventsWhere(t, admin.token, { actor: `user:${user.username}`, type: 'token.issued' })).toEqual([
        {
          ...fromThisRequest(res),
          type: 'token.issued',
          actor: `user:${user.username}`,
          appname: null,
          username: user.username,
          details: { route: '/api/auth/bearer/token', session_id: res.body['session-state'] },
        },
      ]);
    });

    it('when a user refreshes, then token.issued names the refresh route and the same session', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const login = await loginAs(t, user);

      const res = await refreshWith(t, login.refresh_token);

      expect(res.status).toBe(200);
      expect(await eventsOfRequest(t, admin.token, res, { actor: `user:${user.username}` })).toEqual([
        {
          ...fromThisRequest(res),
          type: 'token.issued',
          actor: `user:${user.username}`,
          appname: null,
          username: user.username,
          details: { route: '/api/auth/bearer/refresh', session_id: login['session-state'] },
        },
      ]);
    });

    it('when an API key refreshes, then token.issued names the key (not a user) and the refresh route', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const login = await loginWithApiKey(t, key);

      const res = await refreshWith(t, login.refresh_token);

      expect(res.status).toBe(200);
      expect(await eventsOfRequest(t, admin.token, res, { appname: key.appname })).toEqual([
        expect.objectContaining({
          type: 'token.issued',
          actor: `api_key:${key.appname}`,
          appname: key.appname,
          username: null,
          details: { route: '/api/auth/bearer/refresh', session_id: login['session-state'] },
        }),
      ]);
    });

    it('when a refresh token is used twice, then refresh_token.reused is recorded for that session and no second token is issued', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const login = await loginAs(t, user);
      const rotated = await refreshWith(t, login.refresh_token);

      const res = await refreshWith(t, login.refresh_token);

      expect(res.status).toBe(401);
      expect((await refreshWith(t, rotated.body.refresh_token)).status).toBe(401);
      const events = await eventsWhere(t, admin.token, { actor: `user:${user.username}` });
      expect(events.map((e) => [e.type, e.details.route])).toEqual([
        ['refresh_token.reused', '/api/auth/bearer/refresh'],
        ['token.issued', '/api/auth/bearer/refresh'],
        ['token.issued', '/api/auth/bearer/token'],
      ]);
      expect(events[0]).toEqual({
        ...fromThisRequest(res),
        type: 'refresh_token.reused',
        actor: `user:${user.username}`,
        appname: null,
        username: user.username,
        details: { route: '/api/auth/bearer/refresh', session_id: login['session-state'], reason: 'refresh token reuse' },
      });
    });

    it('when a client revokes its refresh token, then session.revoked is recorded once, even if it revokes again', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const login = await loginAs(t, user);

      const res = await revoke(t, { token: login.refresh_token });
      await revoke(t, { token: login.access_token }).expect(200);

      expect(res.status).toBe(200);
      expect(await eventsWhere(t, admin.token, { actor: `user:${user.username}`, type: 'session.revoked' })).toEqual([
        {
          ...fromThisRequest(res),
          type: 'session.revoked',
          actor: `user:${user.username}`,
          appname: null,
          username: user.username,
          details: { route: '/api/auth/bearer/revoke', session_id: login['session-state'], reason: 'revoked by client (refresh token)' },
        },
      ]);
    });

    it('when an API key’s access token is revoked, then session.revoked names the key', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const login = await loginWithApiKey(t, key);

      const res = await revoke(t, { token: login.access_token });

      expect(res.status).toBe(200);
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'session.revoked' })).toEqual([
        expect.objectContaining({
          actor: `api_key:${key.appname}`,
          request_id: res.headers['x-request-id'],
          details: { route: '/api/auth/bearer/revoke', session_id: login['session-state'], reason: 'revoked by client (access token)' },
        }),
      ]);
    });

    it('when a token that is not ours is revoked, then no session.revoked is recorded', async () => {
      const before = await eventsWhere(t, admin.token, { type: 'session.revoked' });

      const res = await revoke(t, { token: 'garbage' });

      expect(res.status).toBe(200);
      expect(await eventsWhere(t, admin.token, { type: 'session.revoked' })).toEqual(before);
    });
  });

  describe('users (changed through UsersService, as the CLI does)', () => {
    /** The events about this user, newest first. */
    const eventsAbout = async (username: string) => (await eventsWhere(t, admin.token, { actor: 'cli' })).filter((e) => e.username === username);
    const byTheCli = { id: expect.any(Number), occurred_at: expect.any(String), actor: 'cli', appname: null, client_address: null, request_id: null };

    it('when a user is added, then user.created by cli with its role and no address or request id', async () => {
      const username = randomName('user');

      await t.services.users.add(username, 'a-long-password', 'editor', CLI_CONTEXT);

      expect(await eventsAbout(username)).toEqual([{ ...byTheCli, type: 'user.created', username, details: { role: 'editor' } }]);
    });

    it('when a user’s role is changed, then user.updated shows the role before and after', async () => {
      const { username } = await createUser(t, { role: 'viewer' });

      await t.services.users.setRole(username, 'admin', CLI_CONTEXT);

      expect((await eventsAbout(username))[0]).toEqual({
        ...byTheCli,
        type: 'user.updated',
        username,
        details: { role_before: 'viewer', role_after: 'admin' },
      });
    });

    it('when a user’s password is changed, then user.password_changed is recorded without the password', async () => {
      const { username } = await createUser(t, { role: 'viewer' });
      const newPassword = randomName('new-password');

      await t.services.users.setPassword(username, newPassword, CLI_CONTEXT);

      const events = await eventsAbout(username);
      expect(events[0]).toEqual({ ...byTheCli, type: 'user.password_changed', username, details: {} });
      expect(JSON.stringify(events)).not.toContain(newPassword);
    });

    it('when a user is disabled, then user.updated shows disabled before and after', async () => {
      const { username } = await createUser(t, { role: 'viewer' });

      await t.services.users.disable(username, CLI_CONTEXT);

      expect((await eventsAbout(username))[0]).toEqual({ ...byTheCli, type: 'user.updated', username, details: { disabled_before: false, disabled_after: true } });
    });

    it('when a change changes nothing (the role it already has), then no event is recorded', async () => {
      const { username } = await createUser(t, { role: 'viewer' });

      await t.services.users.setRole(username, 'viewer', CLI_CONTEXT);

      expect((await eventsAbout(username)).map((e) => e.type)).toEqual(['user.created']);
    });

    it('when a user is deleted, then user.deleted is recorded and the user’s earlier events remain', async () => {
      const { username } = await createUser(t, { role: 'viewer' });

      await t.services.users.delete(username, CLI_CONTEXT);

      expect((await eventsAbout(username)).map((e) => e.type)).toEqual(['user.deleted', 'user.created']);
    });

    it('when a change to a user is refused (unknown user, taken name, bad role), then no event is recorded', async () => {
      const existing = await createUser(t, { role: 'viewer' });
      const ghost = randomName('ghost');

      await expect(t.services.users.setRole(ghost, 'admin', CLI_CONTEXT)).rejects.toMatchObject({ status: 404 });
      await expect(t.services.users.disable(ghost, CLI_CONTEXT)).rejects.toMatchObject({ status: 404 });
      await expect(t.services.users.add(existing.username, 'another-password', 'admin', CLI_CONTEXT)).rejects.toMatchObject({ status: 409 });
      await expect(t.services.users.setRole(existing.username, 'root', CLI_CONTEXT)).rejects.toMatchObject({ status: 400 });

      expect(await eventsAbout(ghost)).toEqual([]);
      expect((await eventsAbout(existing.username)).map((e) => e.type)).toEqual(['user.created']);
    });
  });
});

describe('an event that cannot be written takes its change with it', () => {
  let t: TestApp;
  let admin: Admin;

  /** Makes the audit table refuse inserts of this type for this appname, as a failing write would. */
  const refuseToRecord = (type: string, appname: string) =>
    t.db.query('INSERT INTO test_refused_audit_events (type, appname) VALUES ($1, $2)', [type, appname]);

  beforeAll(async () => {
    t = await startTestApp();
    admin = await newAdmin(t);
    // Only in this test's own database: a trigger that makes chosen inserts fail.
    await t.db.query('CREATE TABLE test_refused_audit_events (type text, appname text)');
    await t.db.query(`
      CREATE FUNCTION test_refuse_audit_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM test_refused_audit_events r WHERE r.type = NEW.type AND r.appname = NEW.appname) THEN
          RAISE EXCEPTION 'test: this audit event cannot be written';
        END IF;
        RETURN NEW;
      END $$`);
    await t.db.query(`
      CREATE TRIGGER test_refuse_audit_insert BEFORE INSERT ON audit_events
        FOR EACH ROW EXECUTE FUNCTION test_refuse_audit_insert()`);
  });
  afterAll(() => t.close());

  it('when api_key.created cannot be written, then the create fails with 500 and no key exists', async () => {
    const appname = randomName('app');
    await refuseToRecord('api_key.created', appname);

    const res = await t.http().post(KEYS).set(bearer(admin.token)).send({ appname, roles: ['viewer'] });

    expect(res.status).toBe(500);
    expect((await readKey(t, appname)).status).toBe(404);
  });

  it('when api_key.deleted cannot be written, then the delete fails and the key and its tokens keep working', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const { access_token: token } = await loginWithApiKey(t, key);
    await refuseToRecord('api_key.deleted', key.appname);

    const res = await t.http().delete(keyPath(key.appname)).set(bearer(admin.token));

    expect(res.status).toBe(500);
    expect((await t.http().get(keyPath(key.appname)).set(bearer(token))).status).toBe(200);
  });

  it('when token.issued cannot be written, then no session opens, last_login stays unset, and the request token is not spent', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const requestToken = signRequestToken(key.appname, key.appkey);
    await refuseToRecord('token.issued', key.appname);

    const res = await t.http().post('/api/v1/auth/token').send({ jwt: requestToken });

    expect(res.status).toBe(500);
    expect((await readKey(t, key.appname)).body.data.last_login).toBeNull();
    await t.db.query('DELETE FROM test_refused_audit_events');
    expect((await t.http().post('/api/v1/auth/token').send({ jwt: requestToken })).status).toBe(200);
  });
});
