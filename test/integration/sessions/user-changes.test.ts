import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import type { UsersService } from '../../../src/users/users.service';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs, type TestUser } from '../../helpers/factories';
import { expectInvalidToken, expectError } from '../../helpers/errors';
import { claimsOf } from '../../helpers/tokens';
import { callProtected, refreshWith } from '../auth/support';
import { eventsWhere, newAdmin, type Admin } from '../audit/support';

/** A change made at the command line, and the reason its session.revoked events give. */
const CHANGES: [string, string, (users: UsersService, user: TestUser) => Promise<void>][] = [
  ['users set-password', 'password_changed', (users, user) => users.setPassword(user.username, `${user.password}-changed`, CLI_CONTEXT)],
  ['users set-role', 'role_changed', (users, user) => users.setRole(user.username, 'viewer', CLI_CONTEXT)],
  ['users disable', 'user_disabled', (users, user) => users.disable(user.username, CLI_CONTEXT)],
];

describe('a change to a user ends every session of that user (Hardening)', () => {
  let t: TestApp;
  let admin: Admin;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await newAdmin(t);
  });
  afterAll(() => t.close());

  describe.each(CHANGES)('%s', (_command, reason, change) => {
    it(`when it runs, then an old access token and an old refresh token of each session are 401, and one session.revoked per session names ${reason}`, async () => {
      const user = await createUser(t, { role: 'editor' });
      const sessions = [await loginAs(t, user), await loginAs(t, user)];
      for (const s of sessions) expect((await callProtected(t, s.access_token)).status).toBe(200);

      await change(t.services.users, user);

      for (const s of sessions) {
        expectInvalidToken(await callProtected(t, s.access_token));
        expectError(await refreshWith(t, s.refresh_token), 401, 'Unauthorized');
      }
      const revoked = await eventsWhere(t, admin.token, { username: user.username, type: 'session.revoked' });
      expect(revoked.map((e) => e.details).sort((a, b) => String(a.session_id).localeCompare(String(b.session_id)))).toEqual(
        sessions
          .map((s) => String(claimsOf(s.access_token).sid))
          .sort()
          .map((sid) => ({ route: null, session_id: sid, reason })),
      );
      expect(revoked.map(({ actor, appname, client_address, request_id }) => ({ actor, appname, client_address, request_id }))).toEqual([
        { actor: 'cli', appname: null, client_address: null, request_id: null },
        { actor: 'cli', appname: null, client_address: null, request_id: null },
      ]);
    });
  });

  it('when another user is changed, then this user’s session lives on', async () => {
    const bystander = await createUser(t, { role: 'viewer' });
    const login = await loginAs(t, bystander);
    const changed = await createUser(t, { role: 'viewer' });
    await loginAs(t, changed);

    for (const [, , change] of CHANGES) await change(t.services.users, changed);

    expect((await callProtected(t, login.access_token)).status).toBe(200);
    expect((await refreshWith(t, login.refresh_token)).status).toBe(200);
  });

  it('when the password is changed, then the user can log in with the new one and that session works', async () => {
    const user = await createUser(t, { role: 'viewer' });
    await loginAs(t, user);

    await t.services.users.setPassword(user.username, `${user.password}-new`, CLI_CONTEXT);
    const fresh = await loginAs(t, { ...user, password: `${user.password}-new` });

    expect((await callProtected(t, fresh.access_token)).status).toBe(200);
  });
});
