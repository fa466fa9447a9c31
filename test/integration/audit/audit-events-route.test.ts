import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, randomName, type TestApiKey } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { expectError } from '../../helpers/errors';
import { keyPath } from '../api-keys/support';
import { sleep } from '../auth/support';
import { AUDIT, eventsWhere, getEvents, idsOf, newAdmin, type Admin } from './support';

describe('GET /api/v1/audit-events', () => {
  let t: TestApp;
  let admin: Admin;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await newAdmin(t);
  });
  afterAll(() => t.close());

  /** A key with `updates` api_key.updated events after its api_key.created: 1 + updates events. */
  async function keyWithEvents(updates: number): Promise<TestApiKey> {
    const key = await createApiKey(t, { role: 'viewer' });
    for (let i = 0; i < updates; i++) {
      await t.http().put(keyPath(key.appname)).set(bearer(admin.token)).send({ description: `v${i}`, roles: ['viewer'] }).expect(200);
    }
    return key;
  }

  // No token, a refused token, and every role below admin: test/integration/security/bearer-routes.test.ts.
  describe('who may read', () => {
    it('when an API key with the admin role asks, then 200', async () => {
      const { access_token: token } = await loginWithApiKey(t, await createApiKey(t, { role: 'admin' }));

      const res = await getEvents(t, token);

      expect(res.status).toBe(200);
    });
  });

  describe('the answer', () => {
    it('when an admin lists events, then 200 with meta.count and the events newest first, each with every field', async () => {
      const key = await keyWithEvents(2);

      const res = await getEvents(t, admin.token, { appname: key.appname });

      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ code: 200, count: 3 });
      expect(res.body.data.map((e: { type: string }) => e.type)).toEqual(['api_key.updated', 'api_key.updated', 'api_key.created']);
      const ids = idsOf(res.body.data);
      expect([...ids].sort((a, b) => b - a)).toEqual(ids);
      expect(new Set(ids).size).toBe(3);
      for (const event of res.body.data) {
        expect(Object.keys(event).sort()).toEqual(
          ['actor', 'appname', 'client_address', 'details', 'id', 'occurred_at', 'request_id', 'type', 'username'],
        );
        expect(Number.isInteger(event.id)).toBe(true);
        expect(new Date(event.occurred_at).toISOString()).toBe(event.occurred_at);
        expect(Math.abs(Date.parse(event.occurred_at) - Date.now())).toBeLessThan(60_000);
      }
    });

    it('when no limit is given, then at most 100 events come back, the newest', async () => {
      const ghost = randomName('ghost');
      const key = await createApiKey(t, { role: 'viewer' });
      for (let i = 0; i < 105; i++) await t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(ghost, key.appkey) }).expect(401);
      const all = await eventsWhere(t, admin.token, { appname: ghost });

      const res = await getEvents(t, admin.token, { appname: ghost });

      expect(all).toHaveLength(105);
      expect(res.body.meta.count).toBe(100);
      expect(idsOf(res.body.data)).toEqual(idsOf(all.slice(0, 100)));
    });

    it('when limit is given, then only that many of the newest events come back', async () => {
      const key = await keyWithEvents(3);
      const all = await eventsWhere(t, admin.token, { appname: key.appname });

      const res = await getEvents(t, admin.token, { appname: key.appname, limit: 2 });

      expect(res.status).toBe(200);
      expect(idsOf(res.body.data)).toEqual(idsOf(all.slice(0, 2)));
    });

    it('when paging with before = the last id of each page, then the pages hold every event once, without overlap or gap', async () => {
      const key = await keyWithEvents(4);
      const all = await eventsWhere(t, admin.token, { appname: key.appname });

      const first = (await getEvents(t, admin.token, { appname: key.appname, limit: 2 })).body.data;
      const second = (await getEvents(t, admin.token, { appname: key.appname, limit: 2, before: first.at(-1).id })).body.data;
      const third = (await getEvents(t, admin.token, { appname: key.appname, limit: 2, before: second.at(-1).id })).body.data;
      const fourth = (await getEvents(t, admin.token, { appname: key.appname, limit: 2, before: third.at(-1).id })).body.data;

      expect(all).toHaveLength(5);
      expect([first.length, second.length, third.length, fourth.length]).toEqual([2, 2, 1, 0]);
      expect(idsOf([...first, ...second, ...third])).toEqual(idsOf(all));
    });
  });

  describe('a request body', () => {
    it.each([
      ['text/plain', 415, 'UnsupportedMediaType', 'not json'],
      ['application/json', 400, 'BadRequest', '{bad'],
    ] as const)('when a body of type %s that cannot be read is sent, then %i as on the key routes', async (type, status, name, body) => {
      const res = await t.http().get(AUDIT).set(bearer(admin.token)).set('Content-Type', type).send(body);

      expectError(res, status, name);
    });
  });

  describe('filters', () => {
    it('when filtered by appname, then only that key’s events come back, not those of a key whose name merely starts the same', async () => {
      const key = await keyWithEvents(1);
      await createApiKey(t, { role: 'viewer', appname: `${key.appname}-2` });

      const events = await eventsWhere(t, admin.token, { appname: key.appname });

      expect(events.map((e) => [e.type, e.appname])).toEqual([
        ['api_key.updated', key.appname],
        ['api_key.created', key.appname],
      ]);
    });

    it('when filtered by actor, then only that actor’s events come back', async () => {
      const other = await newAdmin(t);
      const mine = randomName('app');
      const theirs = randomName('app');
      await t.http().post('/api/v1/api-keys').set(bearer(admin.token)).send({ appname: mine, roles: [] }).expect(201);
      await t.http().post('/api/v1/api-keys').set(bearer(other.token)).send({ appname: theirs, roles: [] }).expect(201);

      const events = await eventsWhere(t, admin.token, { actor: `user:${other.username}` });

      expect(events.map((e) => [e.type, e.actor, e.appname, e.username])).toEqual([
        ['api_key.created', `user:${other.username}`, theirs, null],
        ['token.issued', `user:${other.username}`, null, other.username],
      ]);
    });

    it('when filtered by username, then only events about that user come back, whoever caused them', async () => {
      const user = await createUser(t, { role: 'viewer' });
      await loginAs(t, user);
      await t.http().post('/api/auth/bearer/token').type('form').send({ username: user.username, password: 'not-the-password' }).expect(401);
      await createUser(t, { role: 'viewer' });

      const events = await eventsWhere(t, admin.token, { username: user.username });

      expect(events.map((e) => [e.type, e.actor, e.username])).toEqual([
        ['login.failed', 'anonymous', user.username],
        ['token.issued', `user:${user.username}`, user.username],
        ['user.created', 'cli', user.username],
      ]);
    });

    it('when filtered by type (with appname), then only events of that type come back', async () => {
      const key = await keyWithEvents(2);
      await loginWithApiKey(t, key);

      const events = await eventsWhere(t, admin.token, { appname: key.appname, type: 'api_key.updated' });

      expect(events.map((e) => e.type)).toEqual(['api_key.updated', 'api_key.updated']);
    });

    it('when filtered by since and until, then since is inclusive and until exclusive at the exact instant, in any time zone', async () => {
      // Events of long ago, at known instants: written as the service writes them, with a chosen time.
      const appname = randomName('old-app');
      const at = ['2001-02-03T00:00:00.000Z', '2001-02-03T01:00:00.000Z', '2001-02-03T02:00:00.000Z'];
      for (const occurredAt of at) {
        await t.db.query("INSERT INTO audit_events (occurred_at, type, actor, appname) VALUES ($1, 'api_key.updated', 'cli', $2)", [occurredAt, appname]);
      }
      const timesOf = (events: { occurred_at: string }[]) => events.map((e) => e.occurred_at);

      const since = await eventsWhere(t, admin.token, { appname, since: at[1]! });
      const until = await eventsWhere(t, admin.token, { appname, until: at[1]! });
      const between = await eventsWhere(t, admin.token, { appname, since: at[1]!, until: at[2]! });
      const sinceInAnotherZone = await eventsWhere(t, admin.token, { appname, since: '2001-02-03T03:00:00+02:00' });

      expect(timesOf(since)).toEqual([at[2], at[1]]);
      expect(timesOf(until)).toEqual([at[0]]);
      expect(timesOf(between)).toEqual([at[1]]);
      expect(timesOf(sinceInAnotherZone)).toEqual([at[2], at[1]]);
    });

    it('when since is the occurred_at of an event just recorded, then that event and the later ones come back', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      await sleep(20);
      await t.http().put(keyPath(key.appname)).set(bearer(admin.token)).send({ roles: ['viewer'] }).expect(200);
      await sleep(20);
      await t.http().put(keyPath(key.appname)).set(bearer(admin.token)).send({ roles: ['editor'] }).expect(200);
      const [third, second, first] = await eventsWhere(t, admin.token, { appname: key.appname });

      const since = await eventsWhere(t, admin.token, { appname: key.appname, since: second!.occurred_at });
      const until = await eventsWhere(t, admin.token, { appname: key.appname, until: second!.occurred_at });

      expect(idsOf(since)).toEqual(idsOf([third!, second!]));
      expect(idsOf(until)).toEqual(idsOf([first!]));
    });
  });

  describe('malformed queries', () => {
    it.each([
      ['limit=0', { limit: '0' }, 'query.limit:'],
      ['limit=1001', { limit: '1001' }, 'query.limit:'],
      ['before=0', { before: '0' }, 'query.before:'],
      ['type=bogus', { type: 'bogus' }, 'query.type:'],
      ['type given twice', { type: ['token.issued', 'login.failed'] }, 'query.type:'],
      ['since that is not a date', { since: 'yesterday' }, 'query.since:'],
      ['since without a time zone', { since: '2026-01-31T12:00:00' }, 'query.since:'],
      ['since equal to until', { since: '2026-01-31T12:00:00Z', until: '2026-01-31T12:00:00Z' }, 'query.since:'],
      ['since after until', { since: '2026-01-31T12:00:00Z', until: '2026-01-31T11:00:00Z' }, 'query.since:'],
      ['an unknown parameter', { x: '1' }, 'query: unknown field "x"'],
      ['a username holding NUL', { username: 'a\u0000b' }, 'query.username:'],
      ['an appname holding NUL', { appname: 'a\u0000b' }, 'query.appname:'],
      ['an actor holding NUL', { actor: 'user:a\u0000b' }, 'query.actor:'],
      ['a type holding NUL', { type: 'token.issued\u0000' }, 'query.type:'],
      ['a since holding NUL', { since: '2026-01-31T12:00:00Z\u0000' }, 'query.since:'],
      ['a before holding NUL', { before: '1\u0000' }, 'query.before:'],
      ['a limit holding NUL', { limit: '1\u0000' }, 'query.limit:'],
    ])('when the query has %s, then 400 naming the field', async (_case, query, named) => {
      const res = await getEvents(t, admin.token, query);

      expectError(res, 400, 'BadRequest', named);
    });
  });

  describe('read-only', () => {
    it.each(['post', 'delete'] as const)(
      'when an admin sends %s, then 405 with Allow: GET and no event changes',
      async (method) => {
        const before = await eventsWhere(t, admin.token, { limit: 1000 });

        const res = await t.http()[method](AUDIT).set(bearer(admin.token)).send({ type: 'api_key.created' });

        expectError(res, 405, 'MethodNotAllowed');
        expect(res.headers.allow).toBe('GET');
        expect(await eventsWhere(t, admin.token, { limit: 1000 })).toEqual(before);
      },
    );

    it('when an admin sends DELETE to one event’s path, then 404 and the event is still listed', async () => {
      const [newest] = await eventsWhere(t, admin.token, { limit: 1 });

      const res = await t.http().delete(`${AUDIT}/${newest!.id}`).set(bearer(admin.token));

      expect(res.status).toBe(404);
      expect(await eventsWhere(t, admin.token, { before: newest!.id + 1, limit: 1 })).toEqual([newest]);
    });
  });
});
