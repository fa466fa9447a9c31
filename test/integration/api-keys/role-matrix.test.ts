import type { Role } from '../../../src/shared/principals';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, randomName, tokenForRole } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';
import { KEYS, keyPath, readKey, regenPath, tokenForApiKeyRole } from './support';

type Write = 'create' | 'update' | 'regen' | 'delete';
/** A cell of the write matrix: the key's role before the call (create has none) and after it. */
type Cell = [op: Write, before: Role | null, after: Role | null, status: number];

const label = (role: Role | null) => (role === null ? 'no-role' : role);
const aKey = (role: Role | null) => `${role === 'admin' || role === 'editor' ? 'an' : 'a'} ${label(role)} key`;
const rolesOf = (role: Role | null) => (role ? [role] : []);
const SUCCESS: Record<Write, number> = { create: 201, update: 200, regen: 200, delete: 204 };

/** Cells as it.each rows with a readable `action`, e.g. "updates a viewer key to admin". */
function rows(cells: Cell[]) {
  const describeAction = ([op, before, after]: Cell) =>
    ({
      create: `creates ${aKey(after)}`,
      update: `updates ${aKey(before)} to ${label(after)}`,
      regen: `regenerates ${aKey(before)} as ${label(after)}`,
      delete: `deletes ${aKey(before)}`,
    })[op];
  return cells.map((cell) => {
    const [op, before, after, status] = cell;
    return { op, before, after, status, action: describeAction(cell) };
  });
}

// Too low a role on each route, for users and API keys alike, is refused by
// test/integration/security/bearer-routes.test.ts; here, which keys each role may read, and which
// key roles it may create, change or delete.
describe('who may call which key operation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** Calls one write operation as `token`; for all but create, on a fresh key of role `before`. */
  async function write(token: string, op: Write, before: Role | null, after: Role | null) {
    const appname = op === 'create' ? randomName('target') : (await createApiKey(t, { role: before, description: 'before' })).appname;
    const body = { description: 'after', roles: rolesOf(after) };
    const http = t.http();
    const res =
      op === 'create'
        ? await http.post(KEYS).set(bearer(token)).send({ appname, ...body })
        : op === 'update'
          ? await http.put(keyPath(appname)).set(bearer(token)).send(body)
          : op === 'regen'
            ? await http.put(regenPath(appname)).set(bearer(token)).send(body)
            : await http.delete(keyPath(appname)).set(bearer(token));
    return { res, appname };
  }

  /** Asserts the answer and what the key looks like afterwards: changed when allowed, untouched when not. */
  async function expectOutcome(op: Write, before: Role | null, after: Role | null, status: number, token: string) {
    const { res, appname } = await write(token, op, before, after);

    expect(res.status).toBe(status);
    const stored = await readKey(t, appname);
    if (status === 403) {
      expectError(res, 403, 'Forbidden');
      if (op === 'create') expect(stored.status).toBe(404);
      else expect(stored.body.data).toEqual(expect.objectContaining({ description: 'before', roles: rolesOf(before) }));
    } else if (op === 'delete') {
      expect(stored.status).toBe(404);
    } else {
      expect(stored.body.data).toEqual(expect.objectContaining({ description: 'after', roles: rolesOf(after) }));
    }
  }

  describe('viewer', () => {
    let viewer: string;
    beforeAll(async () => {
      viewer = await tokenForRole(t, 'viewer');
    });

    it('when a viewer lists keys, then 200', async () => {
      const res = await t.http().get(KEYS).set(bearer(viewer));

      expect(res.status).toBe(200);
      expect(res.body.meta.code).toBe(200);
    });

    it('when a viewer gets a key, then 200 with the record', async () => {
      const key = await createApiKey(t, { role: 'admin' });

      const res = await t.http().get(keyPath(key.appname)).set(bearer(viewer));

      expect(res.status).toBe(200);
      expect(res.body.data.appname).toBe(key.appname);
    });

    it.each(rows([
      ['create', null, 'viewer', 403],
      ['create', null, null, 403],
      ['update', 'viewer', 'viewer', 403],
      ['regen', 'viewer', 'viewer', 403],
      ['delete', 'viewer', null, 403],
      ['delete', null, null, 403],
    ]))('when a viewer $action, then $status Forbidden and nothing changes', async ({ op, before, after, status }) => {
      await expectOutcome(op, before, after, status, viewer);
    });

    it('when a viewer API key lists keys, then 200', async () => {
      const token = await tokenForApiKeyRole(t, 'viewer');

      expect((await t.http().get(KEYS).set(bearer(token))).status).toBe(200);
    });
  });

  describe('editor', () => {
    let editor: string;
    beforeAll(async () => {
      editor = await tokenForRole(t, 'editor');
    });

    it('when an editor lists and gets keys, then 200', async () => {
      const key = await createApiKey(t, { role: 'admin' });

      expect((await t.http().get(KEYS).set(bearer(editor))).status).toBe(200);
      expect((await t.http().get(keyPath(key.appname)).set(bearer(editor))).status).toBe(200);
    });

    const cells: Cell[] = [
      ['create', null, 'viewer', 201],
      ['create', null, 'editor', 201],
      ['create', null, null, 201],
      ['create', null, 'admin', 403],
      ['update', 'viewer', 'editor', 200],
      ['update', 'editor', null, 200],
      ['update', null, 'viewer', 200],
      ['update', 'viewer', 'admin', 403],
      ['update', null, 'admin', 403],
      ['update', 'admin', 'viewer', 403],
      ['update', 'admin', 'admin', 403],
      ['regen', 'viewer', 'viewer', 200],
      ['regen', null, 'editor', 200],
      ['regen', 'editor', 'admin', 403],
      ['regen', 'admin', null, 403],
      ['regen', 'admin', 'admin', 403],
      ['delete', 'viewer', null, 204],
      ['delete', 'editor', null, 204],
      ['delete', null, null, 204],
      ['delete', 'admin', null, 403],
    ];
    it.each(rows(cells))('when an editor $action, then $status', async ({ op, before, after, status }) => {
      await expectOutcome(op, before, after, status, editor);
    });

    it('when an editor API key creates an editor key, then 201', async () => {
      await expectOutcome('create', null, 'editor', 201, await tokenForApiKeyRole(t, 'editor'));
    });

    it('when an editor API key updates an admin key, then 403 Forbidden and the key is unchanged', async () => {
      await expectOutcome('update', 'admin', 'editor', 403, await tokenForApiKeyRole(t, 'editor'));
    });
  });

  describe('admin', () => {
    let admin: string;
    beforeAll(async () => {
      admin = await tokenForRole(t, 'admin');
    });

    it.each(rows([
      ['create', null, 'admin', 201],
      ['update', 'admin', 'viewer', 200],
      ['update', 'viewer', 'admin', 200],
      ['regen', 'admin', 'admin', 200],
      ['regen', 'editor', null, 200],
      ['delete', 'admin', null, 204],
    ]))('when an admin $action, then $status', async ({ op, before, after, status }) => {
      await expectOutcome(op, before, after, status, admin);
    });

    it.each<Write>(['create', 'update', 'regen', 'delete'])(
      'when an admin API key calls %s on admin keys, then it succeeds',
      async (op) => {
        await expectOutcome(op, 'admin', 'admin', SUCCESS[op], await tokenForApiKeyRole(t, 'admin'));
      },
    );
  });

  describe('principal with no role', () => {
    let noRole: string;
    beforeAll(async () => {
      noRole = await tokenForRole(t, null);
    });

    it('when a user with no role logs in, then it obtains an access token', async () => {
      const tokens = await loginAs(t, await createUser(t, { role: null }));

      expect(tokens).toEqual(expect.objectContaining({ access_token: expect.any(String), token_type: 'bearer' }));
    });

    it.each(rows([
      ['create', null, null, 403],
      ['update', null, null, 403],
      ['regen', null, null, 403],
      ['delete', null, null, 403],
    ]))('when a no-role user $action, then $status Forbidden and nothing changes', async ({ op, before, after, status }) => {
      await expectOutcome(op, before, after, status, noRole);
    });
  });

  describe('order of checks: validation (400) before authorisation (403) before existence (404)', () => {
    let viewer: string;
    let editor: string;
    let noRole: string;
    beforeAll(async () => {
      [viewer, editor, noRole] = await Promise.all([
        tokenForRole(t, 'viewer'),
        tokenForRole(t, 'editor'),
        tokenForRole(t, null),
      ]);
    });

    it('when a viewer creates with an invalid body, then 400 rather than 403', async () => {
      const res = await t.http().post(KEYS).set(bearer(viewer)).send({ appname: 'UPPER', roles: [] });

      expectError(res, 400, 'BadRequest', 'appname');
    });

    it('when a viewer updates an existing key with an unknown field, then 400 rather than 403', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await t.http().put(keyPath(key.appname)).set(bearer(viewer)).send({ appname: 'other' });

      expectError(res, 400, 'BadRequest', 'appname');
    });

    it('when a no-role user lists with an invalid limit, then 400 rather than 403', async () => {
      const res = await t.http().get(`${KEYS}?limit=0`).set(bearer(noRole));

      expectError(res, 400, 'BadRequest', 'limit');
    });

    it.each([
      ['update', 'put', keyPath],
      ['regen', 'put', regenPath],
    ] as const)('when a viewer calls %s on a key that does not exist, then 403 rather than 404', async (_op, method, path) => {
      const res = await t.http()[method](path(randomName('ghost'))).set(bearer(viewer)).send({ roles: [] });

      expectError(res, 403, 'Forbidden');
    });

    it('when a viewer deletes a key that does not exist, then 403 rather than 404', async () => {
      const res = await t.http().delete(keyPath(randomName('ghost'))).set(bearer(viewer));

      expectError(res, 403, 'Forbidden');
    });

    it('when a no-role user gets a key that does not exist, then 403 rather than 404', async () => {
      const res = await t.http().get(keyPath(randomName('ghost'))).set(bearer(noRole));

      expectError(res, 403, 'Forbidden');
    });

    it('when an editor updates a key that does not exist to admin, then 403 rather than 404', async () => {
      const res = await t.http().put(keyPath(randomName('ghost'))).set(bearer(editor)).send({ roles: ['admin'] });

      expectError(res, 403, 'Forbidden');
    });

    it('when an editor updates a key that does not exist within its rights, then 404 NotFound', async () => {
      const res = await t.http().put(keyPath(randomName('ghost'))).set(bearer(editor)).send({ roles: ['viewer'] });

      expectError(res, 404, 'NotFound');
    });
  });
});
