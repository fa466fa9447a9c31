import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, type TestUser } from '../../helpers/factories';
import { expectError, expectInvalidToken, expectMissingToken } from '../../helpers/errors';
import { claimsOf } from '../../helpers/tokens';
import { callProtected, refreshWith } from '../auth/support';
import { eventsOfRequest, eventsWhere, newAdmin, type Admin } from '../audit/support';
import { ME } from './support';

const changePassword = (t: TestApp, token: string, body: unknown, from?: string) => {
  const req = t.http().put(`${ME}/password`).set(bearer(token));
  return (from ? req.set('X-Forwarded-For', from) : req).send(body as object);
};

describe('GET /api/v1/me', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('when a user calls with their token, then the principal, its roles, and the token’s own scope and exp', async () => {
    const user = await createUser(t, { role: 'editor' });
    const login = await loginAs(t, user);

    const res = await t.http().get(ME).set(bearer(login.access_token));

    const claims = claimsOf(login.access_token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      meta: { code: 200, count: 1 },
      data: { principal_type: 'user', name: user.username, roles: ['editor'], scope: claims.scope, expires_at: claims.exp },
    });
    expect(res.body.data.scope).toBe('openid api-keys:read api-keys:write');
  });

  it('when the token was narrowed, then scope is the narrowed one; a user without a role has no roles', async () => {
    const user = await createUser(t, { role: 'admin' });
    const narrowed = await t.http().post('/oauth2/token').type('form').send({ grant_type: 'password', username: user.username, password: user.password, scope: 'api-keys:read' });
    const roleless = await loginAs(t, await createUser(t, { role: null }));

    expect((await t.http().get(ME).set(bearer(narrowed.body.access_token))).body.data).toEqual(expect.objectContaining({ roles: ['admin'], scope: 'api-keys:read' }));
    expect((await t.http().get(ME).set(bearer(roleless.access_token))).body.data).toEqual(expect.objectContaining({ roles: [], scope: 'openid' }));
  });

  it('when an API key calls, then principal_type api_key and its appname', async () => {
    const key = await createApiKey(t, { role: 'viewer' });

    const res = await t.http().get(ME).set(bearer((await loginWithApiKey(t, key)).access_token));

    expect(res.body.data).toEqual(expect.objectContaining({ principal_type: 'api_key', name: key.appname, roles: ['viewer'] }));
  });

  it('when no token or a dead one is sent, then 401', async () => {
    expectMissingToken(await t.http().get(ME));
    const user = await createUser(t, { role: 'viewer' });
    const login = await loginAs(t, user);
    await t.services.users.disable(user.username, { actor: 'cli', clientAddress: null, requestId: null, route: null });
    expectInvalidToken(await t.http().get(ME).set(bearer(login.access_token)));
  });
});

describe('PUT /api/v1/me/password', () => {
  let t: TestApp;
  let admin: Admin;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await newAdmin(t);
  });
  afterAll(() => t.close());

  it('when the current password is right and the new one follows the rules, then 204: every other session ends, this one stays, and only the new password works', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const [current, other, third] = [await loginAs(t, user), await loginAs(t, user), await loginAs(t, user)];
    const newPassword = 'my-new-password-77';

    const res = await changePassword(t, current.access_token, { current_password: user.password, new_password: newPassword });

    expect(res.status).toBe(204);
    expect((await callProtected(t, current.access_token)).status).toBe(200);
    expect((await refreshWith(t, current.refresh_token)).status).toBe(200);
    for (const ended of [other, third]) {
      expectInvalidToken(await callProtected(t, ended.access_token));
      expectError(await refreshWith(t, ended.refresh_token), 401, 'Unauthorized');
    }
    expectError(await t.http().post('/api/auth/bearer/token').type('form').send(user), 401, 'Unauthorized');
    expect((await loginAs(t, { ...user, password: newPassword })).access_token).toEqual(expect.any(String));
    const events = await eventsOfRequest(t, admin.token, res);
    expect(events.map((e) => [e.type, e.actor, e.username, e.details.reason ?? null]).sort()).toEqual([
      ['session.revoked', `user:${user.username}`, user.username, 'password_changed'],
      ['session.revoked', `user:${user.username}`, user.username, 'password_changed'],
      ['user.password_changed', `user:${user.username}`, user.username, null],
    ]);
    expect(JSON.stringify(events)).not.toContain(newPassword);
  });

  it('when the current password is wrong, then 401 (the session lives on), login.failed is recorded, and nothing changes', async () => {
    const user = await createUser(t, { role: 'viewer' });
    const login = await loginAs(t, user);

    const res = await changePassword(t, login.access_token, { current_password: 'not-my-password', new_password: 'my-new-password-88' });

    expectError(res, 401, 'Unauthorized', 'The current password is wrong');
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect((await callProtected(t, login.access_token)).status).toBe(200);
    expect((await loginAs(t, user)).access_token).toEqual(expect.any(String));
    expect(await eventsOfRequest(t, admin.token, res)).toEqual([
      expect.objectContaining({ type: 'login.failed', actor: `user:${user.username}`, username: user.username, details: { route: '/api/v1/me/password', reason: 'wrong_password' } }),
    ]);
  });

  it.each([
    ['a short new password', { current_password: 'x', new_password: 'short' }, /^body\.new_password: must be at least 12 characters$/],
    ['a common new password', { current_password: 'x', new_password: 'qwertyuiop123' }, /^body\.new_password: is too common/],
    ['no current password', { new_password: 'my-new-password-99' }, /^body\.current_password: is required$/],
    ['an unknown field', { current_password: 'x', new_password: 'my-new-password-99', username: 'someone' }, /^body: unknown field "username"$/],
    ['a current password over 72 bytes', { current_password: 'x'.repeat(73), new_password: 'my-new-password-99' }, /^body\.current_password: must be at most 72 bytes$/],
  ])('when the body has %s, then 400 naming the field and rule, and no failed login is recorded', async (_what, body, message) => {
    const user = await createUser(t, { role: 'viewer' });
    const login = await loginAs(t, user);

    const res = await changePassword(t, login.access_token, body);

    expectError(res, 400, 'BadRequest', message);
    expect(await eventsOfRequest(t, admin.token, res)).toEqual([]);
    expect((await loginAs(t, user)).access_token).toEqual(expect.any(String));
  });

  it('when an API key calls, even an admin key, then 403', async () => {
    const key = await createApiKey(t, { role: 'admin' });

    const res = await changePassword(t, (await loginWithApiKey(t, key)).access_token, { current_password: key.appkey, new_password: 'my-new-password-11' });

    expectError(res, 403, 'Forbidden', 'Only a user has a password');
  });

  it('when no token is sent, then 401 before the body is looked at', async () => {
    expectMissingToken(await t.http().put(`${ME}/password`).send({ nonsense: true }));
  });
});

describe('PUT /api/v1/me/password counts a wrong current password as a failed login', () => {
  let t: TestApp;
  let user: TestUser;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PASSWORD_FAILURES: '2',
      RATE_LIMIT_PASSWORD_ADDRESS_FAILURES: '10',
      RATE_LIMIT_PASSWORD_WINDOW: '60',
      LOGIN_ACCOUNT_ALERT: '1000',
      TRUST_PROXY: 'loopback',
    });
    user = await createUser(t, { role: 'viewer' });
    token = (await loginAs(t, user)).access_token;
  });
  afterAll(() => t.close());

  it('when the limit of failures for this user and address is reached here, then the next attempt is 429, and so is a password login of that user from that address', async () => {
    const wrong = { current_password: 'wrong-password-1', new_password: 'my-new-password-22' };
    expectError(await changePassword(t, token, wrong, '198.51.100.7'), 401, 'Unauthorized');
    expectError(await changePassword(t, token, wrong, '198.51.100.7'), 401, 'Unauthorized');

    const limited = await changePassword(t, token, { ...wrong, current_password: user.password }, '198.51.100.7');
    const login = await t.http().post('/api/auth/bearer/token').set('X-Forwarded-For', '198.51.100.7').type('form').send(user);

    expectError(limited, 429, 'TooManyRequests');
    expectError(login, 429, 'TooManyRequests');
    // Never per username alone: from another address the user still signs in.
    expect((await t.http().post('/api/auth/bearer/token').set('X-Forwarded-For', '203.0.113.9').type('form').send(user)).status).toBe(200);
    const admin = await newAdmin(t);
    expect((await eventsWhere(t, admin.token, { type: 'login.failed', username: user.username })).length).toBe(2);
  });
});
