import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, randomName, tokenForRole, type TestUser } from '../../helpers/factories';
import { expectError, expectInvalidToken, expectMissingToken } from '../../helpers/errors';
import { callProtected, refreshWith } from '../auth/support';
import { eventsOfRequest, eventsWhere, LOOPBACK, newAdmin, type Admin } from '../audit/support';
import { passwordHashes, RECORD_FIELDS, USERS, userPath, usersApi } from './support';

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('the users API (People): admins manage users as the command line does', () => {
  let t: TestApp;
  let admin: Admin;
  let api: ReturnType<typeof usersApi>;
  /** Every answer these tests received: no hash may show in any of them. */
  const answers: Response[] = [];
  const seen = (res: Response) => (answers.push(res), res);

  beforeAll(async () => {
    t = await startTestApp();
    admin = await newAdmin(t);
    const raw = usersApi(t, admin.token);
    api = Object.fromEntries(Object.entries(raw).map(([name, call]) => [name, async (...args: unknown[]) => seen(await (call as (...a: unknown[]) => Promise<Response>)(...args))])) as typeof raw;
  });
  afterAll(() => t.close());

  describe('create', () => {
    it('when an admin creates a user without a password, then 201 with the record and a generated password shown this once (no-store), and the user logs in with it', async () => {
      const username = randomName('created');

      const res = await api.create({ username, role: 'editor' });

      expect(res.status).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        meta: { code: 201, count: 1 },
        data: { username, role: 'editor', disabled: false, created_at: expect.any(Number), last_login: null, password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) },
      });
      expect(Math.abs(res.body.data.created_at - nowSeconds())).toBeLessThanOrEqual(5);
      const login = await loginAs(t, { username, password: res.body.data.password });
      expect((await callProtected(t, login.access_token)).status).toBe(200);
      const again = await api.get(username);
      expect(Object.keys(again.body.data).sort()).toEqual(RECORD_FIELDS);
    });

    it('when an admin gives the password and no role, then 201 with the record alone (role null), and that password works', async () => {
      const user = { username: randomName('given'), password: 'a-chosen-password-1' };

      const res = await api.create(user);

      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({ username: user.username, role: null, disabled: false, created_at: expect.any(Number), last_login: null });
      expect((await loginAs(t, user)).access_token).toEqual(expect.any(String));
    });

    it('when it succeeds, then user.created names the admin, the user, the role, the address and the request id', async () => {
      const username = randomName('audited');

      const res = await api.create({ username, role: 'viewer' });

      expect(await eventsOfRequest(t, admin.token, res)).toEqual([
        expect.objectContaining({ type: 'user.created', actor: `user:${admin.username}`, username, details: { role: 'viewer' }, client_address: expect.stringMatching(LOOPBACK) }),
      ]);
    });

    it.each([
      ['an unknown field', { username: 'x1', id: 'abc' }, /^body: unknown field "id"$/],
      ['a username that breaks the rule', { username: 'has space' }, /^body\.username: must be 1 to 64 characters/],
      ['a username starting with a dot', { username: '.hidden' }, /^body\.username: /],
      ['an unknown role', { username: 'x2', role: 'root' }, /^body\.role: must be one of viewer, editor, admin, or null/],
      ['the role as an array', { username: 'x3', role: ['admin'] }, /^body\.role: /],
      ['a short password', { username: 'x4', password: 'short' }, /^body\.password: must be at least 12 characters$/],
      ['a common password', { username: 'x5', password: 'password1234' }, /^body\.password: is too common/],
      ['no username', { role: 'viewer' }, /^body\.username: is required$/],
    ])('when the body has %s, then 400 naming it and no user is created', async (_what, body, message) => {
      const res = await api.create(body);

      expectError(res, 400, 'BadRequest', message);
      const username = (body as { username?: string }).username;
      if (username) expect((await api.get(username)).status).not.toBe(200);
    });

    it('when the username is taken, then 409 and the user is unchanged', async () => {
      const existing = await createUser(t, { role: 'viewer' });

      const res = await api.create({ username: existing.username, role: 'admin' });

      expectError(res, 409, 'Conflict', `User "${existing.username}" already exists`);
      expect((await api.get(existing.username)).body.data.role).toBe('viewer');
    });
  });

  describe('list and get', () => {
    it('when users exist, then the list is ordered by username in byte order and pages with limit and after', async () => {
      const prefix = randomName('paged');
      const names = [`${prefix}-B`, `${prefix}-a`, `${prefix}-_`, `${prefix}-0`];
      for (const username of names) expect((await api.create({ username, password: 'a-long-password-x' })).status).toBe(201);

      const all = await api.list();
      const ours = (all.body.data as { username: string }[]).map((u) => u.username).filter((n) => n.startsWith(prefix));
      const first = await api.list(`?limit=2&after=${encodeURIComponent(`${prefix}-`)}`);
      const next = await api.list(`?limit=2&after=${encodeURIComponent(first.body.data[1].username)}`);

      expect(ours).toEqual([...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      expect(all.body.meta).toEqual({ code: 200, count: all.body.data.length });
      expect(first.body).toEqual({ meta: { code: 200, count: 2 }, data: [expect.objectContaining({ username: ours[0] }), expect.objectContaining({ username: ours[1] })] });
      expect(next.body.data.slice(0, 2).map((u: { username: string }) => u.username)).toEqual(ours.slice(2));
      for (const record of all.body.data) expect(Object.keys(record).sort()).toEqual(RECORD_FIELDS);
    });

    it.each([
      ['limit=0', /^query\.limit: must be a whole number from 1 to 1000$/],
      ['limit=1001', /^query\.limit: /],
      ['after=no%20spaces', /^query\.after: /],
      ['sort=username', /^query: unknown field "sort"$/],
    ])('when the query has %s, then 400 naming it', async (query, message) => {
      expectError(await api.list(`?${query}`), 400, 'BadRequest', message);
    });

    it('when a user logs in, then last_login is the time of that login in Unix seconds', async () => {
      const user = await createUser(t, { role: 'viewer' });
      expect((await api.get(user.username)).body.data.last_login).toBeNull();

      const before = nowSeconds();
      await loginAs(t, user);

      const lastLogin = (await api.get(user.username)).body.data.last_login as number;
      expect(lastLogin).toBeGreaterThanOrEqual(before - 1);
      expect(lastLogin).toBeLessThanOrEqual(nowSeconds() + 1);
    });

    it('when the user is unknown, then 404; when the name breaks the rule, then 400', async () => {
      expectError(await api.get(randomName('ghost')), 404, 'NotFound');
      expectError(await api.get('bad name'), 400, 'BadRequest', /^params\.username: /);
    });
  });

  describe('update (replace role and disabled)', () => {
    it('when an admin changes the role, then 200 with the record, every session of the user ends (session.revoked, role_changed) and user.updated names before and after', async () => {
      const user = await createUser(t, { role: 'editor' });
      const sessions = [await loginAs(t, user), await loginAs(t, user)];

      const res = await api.update(user.username, { role: 'viewer', disabled: false });

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ meta: { code: 200, count: 1 }, data: expect.objectContaining({ username: user.username, role: 'viewer', disabled: false }) });
      for (const s of sessions) {
        expectInvalidToken(await callProtected(t, s.access_token));
        expectError(await refreshWith(t, s.refresh_token), 401, 'Unauthorized');
      }
      const events = await eventsOfRequest(t, admin.token, res);
      expect(events.map((e) => [e.type, e.actor, e.details.reason])).toEqual(
        expect.arrayContaining([
          ['user.updated', `user:${admin.username}`, undefined],
          ['session.revoked', `user:${admin.username}`, 'role_changed'],
          ['session.revoked', `user:${admin.username}`, 'role_changed'],
        ]),
      );
      expect(events).toHaveLength(3);
      expect(events.find((e) => e.type === 'user.updated')!.details).toEqual({ role_before: 'editor', role_after: 'viewer' });
    });

    it('when fields are omitted, then the role becomes none and disabled false (replace)', async () => {
      const user = await createUser(t, { role: 'admin', disabled: true });

      const res = await api.update(user.username, {});

      expect(res.body.data).toEqual(expect.objectContaining({ role: null, disabled: false }));
    });

    it('when a user is disabled, then their sessions end (user_disabled) and they cannot log in; enabled again, they can', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const login = await loginAs(t, user);

      const disabled = await api.update(user.username, { role: 'viewer', disabled: true });

      expect(disabled.body.data.disabled).toBe(true);
      expectInvalidToken(await callProtected(t, login.access_token));
      expectError(await t.http().post('/api/auth/bearer/token').type('form').send(user), 401, 'Unauthorized');
      const revoked = (await eventsOfRequest(t, admin.token, disabled)).filter((e) => e.type === 'session.revoked');
      expect(revoked.map((e) => e.details.reason)).toEqual(['user_disabled']);

      const enabled = await api.update(user.username, { role: 'viewer', disabled: false });
      expect(enabled.body.data.disabled).toBe(false);
      expect((await eventsOfRequest(t, admin.token, enabled)).map((e) => [e.type, e.details])).toEqual([
        ['user.updated', { disabled_before: true, disabled_after: false }],
      ]);
      expect((await loginAs(t, user)).access_token).toEqual(expect.any(String));
    });

    it('when the body changes nothing, then 200, no event, and the sessions live on', async () => {
      const user = await createUser(t, { role: 'editor' });
      const login = await loginAs(t, user);

      const res = await api.update(user.username, { role: 'editor', disabled: false });

      expect(res.status).toBe(200);
      expect(await eventsOfRequest(t, admin.token, res)).toEqual([]);
      expect((await callProtected(t, login.access_token)).status).toBe(200);
    });

    it.each([
      ['an unknown field', { role: 'viewer', username: 'renamed' }, /^body: unknown field "username"$/],
      ['disabled as a string', { disabled: 'true' }, /^body\.disabled: /],
      ['an unknown role', { role: 'superuser' }, /^body\.role: /],
    ])('when the body has %s, then 400 naming it and nothing changes', async (_what, body, message) => {
      const user = await createUser(t, { role: 'editor' });

      expectError(await api.update(user.username, body), 400, 'BadRequest', message);

      expect((await api.get(user.username)).body.data).toEqual(expect.objectContaining({ role: 'editor', disabled: false }));
    });

    it('when the user is unknown, then 404', async () => {
      expectError(await api.update(randomName('ghost'), { role: 'viewer' }), 404, 'NotFound');
    });
  });

  describe('reset password', () => {
    it('when an admin sets a password, then 204, every session ends (password_changed), the old password is refused and the new one works', async () => {
      const user = await createUser(t, { role: 'viewer' });
      const login = await loginAs(t, user);
      const password = 'a-fresh-password-2';

      const res = await api.resetPassword(user.username, { password });

      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expectInvalidToken(await callProtected(t, login.access_token));
      expectError(await t.http().post('/api/auth/bearer/token').type('form').send(user), 401, 'Unauthorized');
      expect((await loginAs(t, { ...user, password })).access_token).toEqual(expect.any(String));
      const events = await eventsOfRequest(t, admin.token, res);
      expect(events.map((e) => [e.type, e.details.reason])).toEqual(expect.arrayContaining([['user.password_changed', undefined], ['session.revoked', 'password_changed']]));
      expect(JSON.stringify(events)).not.toContain(password);
    });

    it.each([
      ['a short password', { password: 'too-short' }, /^body\.password: must be at least 12 characters$/],
      ['one character repeated', { password: 'aaaaaaaaaaaaaaaa' }, /^body\.password: must not be one character repeated$/],
      ['over 72 bytes', { password: 'é'.repeat(37) }, /^body\.password: must be at most 72 bytes$/],
      ['no password', {}, /^body\.password: is required$/],
      ['an unknown field', { password: 'a-fresh-password-3', current_password: 'x' }, /^body: unknown field "current_password"$/],
    ])('when the body has %s, then 400 naming the rule and the password is unchanged', async (_what, body, message) => {
      const user = await createUser(t, { role: 'viewer' });

      expectError(await api.resetPassword(user.username, body), 400, 'BadRequest', message);

      expect((await loginAs(t, user)).access_token).toEqual(expect.any(String));
    });
  });

  describe('delete', () => {
    it('when an admin deletes a user, then 204, the user’s tokens stop working, user.deleted is recorded, and a second delete is 404', async () => {
      const user = await createUser(t, { role: 'editor' });
      const login = await loginAs(t, user);

      const res = await api.remove(user.username);

      expect(res.status).toBe(204);
      expectInvalidToken(await callProtected(t, login.access_token));
      expectError(await api.get(user.username), 404, 'NotFound');
      expect((await eventsOfRequest(t, admin.token, res)).map((e) => [e.type, e.actor, e.username])).toEqual([['user.deleted', `user:${admin.username}`, user.username]]);
      expectError(await api.remove(user.username), 404, 'NotFound');
    });
  });

  describe('who may', () => {
    let target: TestUser;
    beforeAll(async () => {
      target = await createUser(t, { role: 'viewer' });
    });

    const everyRoute = (token: string) => {
      const as = usersApi(t, token);
      return [
        as.list(),
        as.create({ username: randomName('nope'), role: 'admin' }),
        as.get(target.username),
        as.update(target.username, { role: 'admin' }),
        as.remove(target.username),
        as.resetPassword(target.username, { password: 'a-password-nobody-sets' }),
      ];
    };

    it.each([['a viewer', 'viewer'], ['an editor', 'editor'], ['a user with no role', null]] as const)('when %s calls any route, then 403 and nothing changes', async (_who, role) => {
      const token = await tokenForRole(t, role);

      for (const res of await Promise.all(everyRoute(token))) expectError(seen(res), 403, 'Forbidden', 'Users are managed by admins only');

      expect((await api.get(target.username)).body.data).toEqual(expect.objectContaining({ role: 'viewer', disabled: false }));
      expect((await loginAs(t, target)).access_token).toEqual(expect.any(String));
    });

    it('when an admin’s token was narrowed to read-only scope, then 403', async () => {
      const narrowed = await t.http().post('/oauth2/token').type('form').send({ grant_type: 'password', username: admin.username, password: admin.password, scope: 'openid api-keys:read' });

      expectError(await usersApi(t, narrowed.body.access_token).list(), 403, 'Forbidden');
    });

    it('when an admin API key calls, then it may (its role is admin), and the events name it', async () => {
      const key = await createApiKey(t, { role: 'admin' });
      const token = (await loginWithApiKey(t, key)).access_token;
      const username = randomName('by-key');

      const res = await usersApi(t, token).create({ username, role: 'viewer' });

      expect(res.status).toBe(201);
      expect((await eventsOfRequest(t, admin.token, res))[0]).toEqual(expect.objectContaining({ type: 'user.created', actor: `api_key:${key.appname}` }));
    });

    it('when no token is sent, then 401 before anything else, even with a bad body; with a token, 400 comes before 403', async () => {
      expectMissingToken(await t.http().post(USERS).send({ username: 'bad name', extra: 1 }));
      expectMissingToken(await t.http().put(userPath('bad name')).type('json').send('{not json'));
      const viewer = await tokenForRole(t, 'viewer');
      expectError(await usersApi(t, viewer).create({ username: 'bad name' }), 400, 'BadRequest', /^body\.username: /);
      expectError(await t.http().put(userPath(target.username)).set(bearer(viewer)).type('text').send('role=admin'), 415, 'UnsupportedMediaType');
    });

    it('when a method is not served, then 405 with Allow', async () => {
      const res = await t.http().patch(userPath(target.username)).set(bearer(admin.token)).send({ role: 'admin' });

      expectError(res, 405, 'MethodNotAllowed');
      expect(res.headers.allow).toBe('GET, PUT, DELETE');
    });
  });

  it('in every answer above, no password hash and no user id', async () => {
    const hashes = await passwordHashes(t);
    const text = answers.map((res) => `${JSON.stringify(res.headers)}${res.text}`).join('\n');

    expect(answers.length).toBeGreaterThan(30);
    for (const hash of hashes) expect(text).not.toContain(hash);
    expect(text).not.toMatch(/\$2[aby]\$/);
    expect(text).not.toMatch(/password_hash|"id":/);
    const { rows } = await t.db.query<{ id: string }>('SELECT id FROM users');
    for (const { id } of rows) expect(text).not.toContain(id);
    expect((await eventsWhere(t, admin.token, { type: 'user.created' })).length).toBeGreaterThan(5);
  });
});
