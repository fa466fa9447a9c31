import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, randomName } from '../../helpers/factories';
import { auditTableRows, eventsWhere, newAdmin, type Admin } from './support';

describe('audit_events is append-only, even to SQL run straight on the database', () => {
  let t: TestApp;
  let admin: Admin;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await newAdmin(t);
    await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it.each([
    ['UPDATE of every row', "UPDATE audit_events SET actor = 'someone-else'"],
    ['UPDATE of one row', "UPDATE audit_events SET details = '{}' WHERE id = (SELECT max(id) FROM audit_events)"],
    ['DELETE of every row', 'DELETE FROM audit_events'],
    ['DELETE of one row', 'DELETE FROM audit_events WHERE id = (SELECT min(id) FROM audit_events)'],
    ['TRUNCATE', 'TRUNCATE audit_events'],
  ])('when %s is attempted, then it is refused as append-only and every row is unchanged', async (_case, sql) => {
    const before = await auditTableRows(t);
    expect(before.length).toBeGreaterThan(0);

    const attempt = t.db.query(sql);

    await expect(attempt).rejects.toThrow(/append-only/);
    expect(await auditTableRows(t)).toEqual(before);
  });

  it('when changes have been refused, then new events are still recorded, with ids above every earlier one', async () => {
    await expect(t.db.query('DELETE FROM audit_events')).rejects.toThrow(/append-only/);
    const [newest] = await eventsWhere(t, admin.token, { limit: 1 });
    const username = randomName('user');

    await t.services.users.add(username, 'a-long-password', 'viewer', CLI_CONTEXT);

    const [event] = await eventsWhere(t, admin.token, { limit: 1 });
    expect(event).toEqual(expect.objectContaining({ type: 'user.created', username }));
    expect(event!.id).toBeGreaterThan(newest!.id);
  });
});
