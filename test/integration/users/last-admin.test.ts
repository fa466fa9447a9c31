import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs, randomName, type TestUser } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import { runUsersCommand } from '../../../src/cli/users.command';
import { usersApi } from './support';

/** The enabled admins, as the database holds them. */
async function enabledAdmins(t: TestApp): Promise<string[]> {
  const { rows } = await t.db.query<{ username: string }>("SELECT username FROM users WHERE role = 'admin' AND NOT disabled ORDER BY username");
  return rows.map((r) => r.username);
}

describe('the last enabled admin is kept (409), by the API and the command line alike', () => {
  let t: TestApp;
  let only: TestUser;
  let token: string;
  beforeAll(async () => {
    // An app of its own: these tests count every admin of the database.
    t = await startTestApp();
    only = await createUser(t, { role: 'admin' });
    token = (await loginAs(t, only)).access_token;
  });
  afterAll(() => t.close());

  it.each([
    ['demoted', { role: 'editor', disabled: false }],
    ['disabled', { role: 'admin', disabled: true }],
    ['demoted by an omitted role', {}],
  ])('when the only enabled admin would be %s, then 409 and nothing changes', async (_what, body) => {
    const res = await usersApi(t, token).update(only.username, body);

    expectError(res, 409, 'Conflict', `"${only.username}" is the last enabled admin`);
    expect(await enabledAdmins(t)).toEqual([only.username]);
    expect((await usersApi(t, token).list()).status).toBe(200);
  });

  it('when the only enabled admin would be deleted, then 409 and the admin remains', async () => {
    expectError(await usersApi(t, token).remove(only.username), 409, 'Conflict', 'last enabled admin');

    expect(await enabledAdmins(t)).toEqual([only.username]);
  });

  it('when the command line tries the same, then it refuses with the same rule', async () => {
    await expect(runUsersCommand(t.services.users, ['set-role', only.username, 'viewer'])).rejects.toMatchObject({ status: 409 });
    await expect(runUsersCommand(t.services.users, ['disable', only.username])).rejects.toMatchObject({ status: 409 });
    await expect(runUsersCommand(t.services.users, ['delete', only.username])).rejects.toMatchObject({ status: 409 });

    expect(await enabledAdmins(t)).toEqual([only.username]);
  });

  it('when a disabled admin exists beside it, then the enabled one is still the last (409), and the disabled one may be demoted', async () => {
    const dormant = await createUser(t, { role: 'admin', disabled: true });

    expectError(await usersApi(t, token).update(only.username, { role: 'viewer' }), 409, 'Conflict');
    expect((await usersApi(t, token).update(dormant.username, { role: 'viewer', disabled: true })).status).toBe(200);
  });

  it('when another enabled admin exists, then the first may be demoted, and the other is then the last', async () => {
    const second = await createUser(t, { role: 'admin' });
    const secondToken = (await loginAs(t, second)).access_token;

    expect((await usersApi(t, secondToken).update(only.username, { role: 'viewer' })).status).toBe(200);

    expectError(await usersApi(t, secondToken).remove(second.username), 409, 'Conflict');
    expect(await enabledAdmins(t)).toEqual([second.username]);
    // Back as it was, for the tests after.
    await t.services.users.setRole(only.username, 'admin', CLI_CONTEXT);
    await t.services.users.delete(second.username, CLI_CONTEXT);
    token = (await loginAs(t, only)).access_token;
  });

  it('when two admins demote (or disable, or delete) each other at the same moment through the API, then one change wins, the other is refused, and one enabled admin always remains', async () => {
    const changes = [
      (as: string, other: string) => usersApi(t, as).update(other, { role: 'editor' }),
      (as: string, other: string) => usersApi(t, as).update(other, { role: 'admin', disabled: true }),
      (as: string, other: string) => usersApi(t, as).remove(other),
    ];
    let survivor = only;
    for (let round = 0; round < 9; round++) {
      const rival = await createUser(t, { role: 'admin' });
      const [survivorToken, rivalToken] = [(await loginAs(t, survivor)).access_token, (await loginAs(t, rival)).access_token];
      const change = changes[round % changes.length]!;

      const statuses = (await Promise.all([change(survivorToken, rival.username), change(rivalToken, survivor.username)])).map((res) => res.status);

      // The loser is 409 when it got past the bearer check before the winner committed, else 401: the winner ended its session.
      expect(statuses.filter((s) => s === 200 || s === 204)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409 || s === 401)).toHaveLength(1);
      const left = await enabledAdmins(t);
      expect(left).toHaveLength(1);
      survivor = left[0] === rival.username ? rival : survivor;
    }
    only = survivor;
    token = (await loginAs(t, only)).access_token;
  });

  it('when the two changes reach the service at the same moment (no bearer check between), then exactly one is 409 every time: the rows are locked', async () => {
    const changes = [
      (other: string) => t.services.users.update(other, { role: 'viewer' }, CLI_CONTEXT),
      (other: string) => t.services.users.update(other, { disabled: true }, CLI_CONTEXT),
      (other: string) => t.services.users.delete(other, CLI_CONTEXT),
    ];
    let survivor = only;
    for (let round = 0; round < 9; round++) {
      const rival = await createUser(t, { role: 'admin' });
      const change = changes[round % changes.length]!;

      const outcomes = await Promise.allSettled([change(rival.username), change(survivor.username)]);

      expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(outcomes.find((o) => o.status === 'rejected')).toEqual({ status: 'rejected', reason: expect.objectContaining({ status: 409 }) });
      const left = await enabledAdmins(t);
      expect(left).toHaveLength(1);
      survivor = left[0] === rival.username ? rival : survivor;
    }
    only = survivor;
    token = (await loginAs(t, only)).access_token;
  });

  it('when the command line lists users, then it goes through the same service: every user, with role, status and last login', async () => {
    const user = await createUser(t, { role: 'viewer' });
    await runUsersCommand(t.services.users, ['disable', user.username]);
    await runUsersCommand(t.services.users, ['enable', user.username]);
    await loginAs(t, user);

    const listed = await runUsersCommand(t.services.users, ['list']);

    expect(listed.split('\n').find((line) => line.startsWith(`${user.username}\t`))).toMatch(
      new RegExp(`^${user.username}\\tviewer\\tactive\\tcreated \\d{4}-\\d\\d-\\d\\dT[^\\t]+\\tlast login \\d{4}-\\d\\d-\\d\\dT`),
    );
    expect(listed).toContain(`${only.username}\tadmin\tactive`);
    expect(randomName('x')).not.toBe('');
  });
});
