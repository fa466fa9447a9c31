import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { expectError } from '../../helpers/errors';
import { callProtected, expectTokenResponse, PATHS } from './support';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import { UsersService } from '../../../src/users/users.service';
import { Credentials } from '../../../src/users/credentials';

describe('POST /api/auth/bearer/token (token via user credentials)', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const loginForm = (body: object) => t.http().post(PATHS.passwordToken).type('form').send(body);

  describe('happy path', () => {
    it('when form-urlencoded credentials are right, then 200 with a token response whose access token works', async () => {
      const res = await loginForm(user);

      expectTokenResponse(res, { accessTtl: 300 });
      expect(claimsOf(res.body.access_token)).toMatchObject({ preferred_username: user.username, principal_type: 'user' });
      expect((await callProtected(t, res.body.access_token)).status).toBe(200);
    });

    it('when JSON credentials are right, then 200 with a token response', async () => {
      const res = await t.http().post(PATHS.passwordToken).send(user);

      expectTokenResponse(res, { accessTtl: 300 });
    });

    it('when a user logs in twice, then each login opens its own session', async () => {
      const first = await loginForm(user);
      const second = await loginForm(user);

      expect(first.body['session-state']).not.toBe(second.body['session-state']);
    });
  });

  describe('refused credentials (401)', () => {
    it('when the password is wrong or the user unknown, then 401 with the identical body', async () => {
      const wrongPassword = await loginForm({ username: user.username, password: `${user.password}x` });
      const unknownUser = await loginForm({ username: 'no-such-user', password: user.password });

      expectError(wrongPassword, 401, 'Unauthorized');
      expectError(unknownUser, 401, 'Unauthorized');
      expect(unknownUser.body).toEqual(wrongPassword.body);
      // No token was sent, so the challenge names no invalid_token (RFC 6750 §3.1).
      expect([wrongPassword.headers['www-authenticate'], unknownUser.headers['www-authenticate']]).toEqual(['Bearer', 'Bearer']);
    });

    it.each([
      ['the password is empty', (u: TestUser) => ({ username: u.username, password: '' })],
      ['the username is empty', (u: TestUser) => ({ username: '', password: u.password })],
    ])('when %s, then 401 like any wrong credential, and the failure is recorded', async (_label, body) => {
      const res = await loginForm(body(user));
      const { rows } = await t.db.query<{ username: string }>(
        "SELECT username FROM audit_events WHERE type = 'login.failed' AND request_id = $1",
        [res.headers['x-request-id']],
      );

      expectError(res, 401, 'Unauthorized');
      expect(rows).toEqual([{ username: body(user).username }]);
    });

    it.each([
      ['a NUL character', '\u0000'],
      ['an unpaired surrogate', '\ud800'],
    ])('when the username holds %s, then 400 naming the field: no user can be named so, and nothing is recorded', async (_label, bad) => {
      const res = await t.http().post('/api/auth/bearer/token').send({ username: `${user.username}${bad}`, password: user.password });
      const { rows } = await t.db.query('SELECT 1 FROM audit_events WHERE request_id = $1', [res.headers['x-request-id']]);

      expectError(res, 400, 'BadRequest', /body\.username/);
      expect(rows).toEqual([]);
    });

    it('when the user is disabled, then 401 even with the right password', async () => {
      const disabled = await createUser(t, { role: 'admin', disabled: true });

      const res = await loginForm(disabled);

      expectError(res, 401, 'Unauthorized');
    });
  });

  describe('a user changed by another instance or the CLI, after logging in here', () => {
    // Another process on the same database: this instance hears nothing of its changes.
    const elsewhere = () => new UsersService(t.db, 4, new Credentials(t.db, 4));

    it('when the password is changed, then the old password is refused and the new one accepted', async () => {
      const changed = await createUser(t, { role: 'viewer' });
      expect((await loginForm(changed)).status).toBe(200);

      await elsewhere().setPassword(changed.username, `${changed.password}-new`, CLI_CONTEXT);

      expectError(await loginForm(changed), 401, 'Unauthorized');
      expect((await loginForm({ ...changed, password: `${changed.password}-new` })).status).toBe(200);
    });

    it('when the user is disabled, then the right password is refused', async () => {
      const disabled = await createUser(t, { role: 'viewer' });
      expect((await loginForm(disabled)).status).toBe(200);

      await elsewhere().disable(disabled.username, CLI_CONTEXT);

      expectError(await loginForm(disabled), 401, 'Unauthorized');
    });

    it('when the user is deleted, then the right password is refused', async () => {
      const deleted = await createUser(t, { role: 'viewer' });
      expect((await loginForm(deleted)).status).toBe(200);

      await elsewhere().delete(deleted.username, CLI_CONTEXT);

      expectError(await loginForm(deleted), 401, 'Unauthorized');
    });

    it('when the role is changed, then the next token carries the new role', async () => {
      const promoted = await createUser(t, { role: 'viewer' });
      expect((await loginForm(promoted)).status).toBe(200);

      await elsewhere().setRole(promoted.username, 'admin', CLI_CONTEXT);

      expect(claimsOf((await loginForm(promoted)).body.access_token)).toMatchObject({ roles: ['admin'] });
    });
  });

  describe('malformed requests (400/415)', () => {
    it.each([
      ['username', (u: TestUser) => ({ password: u.password })],
      ['password', (u: TestUser) => ({ username: u.username })],
    ])('when %s is missing, then 400', async (_field, body) => {
      const res = await loginForm(body(user));

      expectError(res, 400, 'BadRequest');
    });

    it('when the password is over 72 bytes, then 400 rather than a silently truncated check', async () => {
      // A truncating bcrypt would accept password + one more byte, since only the first 72 bytes count.
      const longPassword = `${'é'.repeat(35)}ab`; // 72 bytes in UTF-8
      const longUser = { username: `long-${Date.now()}`, password: longPassword };
      await t.services.users.add(longUser.username, longUser.password, 'viewer', CLI_CONTEXT);

      const exact = await loginForm(longUser);
      const over = await loginForm({ username: longUser.username, password: `${longPassword}x` });

      expect(exact.status).toBe(200);
      expectError(over, 400, 'BadRequest');
    });

    it('when the password holds a NUL character, then 400 naming it, since bcrypt would stop reading there', async () => {
      const res = await loginForm({ username: user.username, password: `${user.password}\u0000anything` });

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toContain('password');
    });

    it('when a small form body carries 150 unknown fields, then 400 naming the first ten (not 413: it is far under 64 KiB)', async () => {
      const strangers = Array.from({ length: 150 }, (_, i) => `f${i}=1`).join('&');

      const res = await t.http().post(PATHS.passwordToken).type('form').send(`username=${user.username}&password=x&${strangers}`);

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toBe(`body: unknown fields ${Array.from({ length: 10 }, (_, i) => `"f${i}"`).join(', ')} and 140 more`);
    });

    it.each([
      ['one field repeated', 'a=&'.repeat(20_000)],
      ['empty fields', '&'.repeat(60_000)],
      ['distinct fields', Array.from({ length: 1001 }, (_, i) => `f${i}=1`).join('&')],
    ])('when a form body under 64 KiB carries more than 1000 fields (%s), then 400 saying so, not 413', async (_label, body) => {
      const res = await t.http().post(PATHS.passwordToken).type('form').send(body);

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toBe('A form body may carry at most 1000 fields');
    });

    it('when the content type is text/plain, then 415', async () => {
      const res = await t.http().post(PATHS.passwordToken).set('Content-Type', 'text/plain').send('username=a&password=b');

      expectError(res, 415, 'UnsupportedMediaType');
    });
  });
});
