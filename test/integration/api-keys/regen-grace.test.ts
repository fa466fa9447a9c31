import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenResponse } from '../../../src/tokens/tokens.responses';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey, tokenForRole, type TestApiKey } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { expectError, expectInvalidToken } from '../../helpers/errors';
import { introspect } from '../oauth/support';
import { keyPath, readKey, regenPath } from './support';

/** Rolling an appkey with `?grace_seconds=N`: the old appkey and its sessions live on for N seconds. */
describe('PUT /api/v1/api-keys/{appname}/regen?grace_seconds=N (rolling a key)', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  const regen = (appname: string, query: string, body: object = { roles: ['viewer'] }) =>
    t.http().put(`${regenPath(appname)}${query}`).set(bearer(admin)).send(body);
  const exchange = (key: TestApiKey) => t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) });
  const readWith = (key: TestApiKey, accessToken: string) => t.http().get(keyPath(key.appname)).set(bearer(accessToken));
  const refresh = (tokens: TokenResponse) =>
    t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: tokens.refresh_token });

  /**
   * Regenerates with a grace and returns the new appkey and when the grace ends by this test's clock.
   * The grace ends `graceSeconds` after the regen's statement ran, somewhere between the request and
   * its answer: not before graceEndsAfter, and by graceEndsBy (a slow PGlite can take over 300 ms).
   */
  async function roll(key: TestApiKey, graceSeconds: number): Promise<{ next: TestApiKey; graceEndsAfter: number; graceEndsBy: number }> {
    const sent = Date.now();
    const res = await regen(key.appname, `?grace_seconds=${graceSeconds}`).expect(200);
    const answered = Date.now();
    return {
      next: { appname: key.appname, appkey: res.body.data.appkey },
      graceEndsAfter: sent + graceSeconds * 1000,
      graceEndsBy: answered + graceSeconds * 1000,
    };
  }

  describe('during the grace', () => {
    it('when a key is regenerated with a grace, then both the old and the new appkey exchange for tokens', async () => {
      const old = await createApiKey(t, { role: 'viewer' });

      const { next } = await roll(old, 60);

      expect((await exchange(old)).status).toBe(200);
      expect((await exchange(next)).status).toBe(200);
    });

    it('when a session was opened with the old appkey before the regen, then its access and refresh tokens keep working', async () => {
      const old = await createApiKey(t, { role: 'viewer' });
      const before = await loginWithApiKey(t, old);

      await roll(old, 60);

      await readWith(old, before.access_token).expect(200);
      const refreshed = await refresh(before);
      expect(refreshed.status).toBe(200);
      await readWith(old, refreshed.body.access_token).expect(200);
    });

    it('when the old session is introspected during the grace, then it is active', async () => {
      const old = await createApiKey(t, { role: 'viewer' });
      const before = await loginWithApiKey(t, old);

      await roll(old, 60);
      const res = await introspect(t, admin, { token: before.access_token });

      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ active: true, client_id: old.appname }));
    });

    it('when the regen also changes the role, then sessions of the old appkey get the new role too', async () => {
      const old = await createApiKey(t, { role: 'viewer' });
      const before = await loginWithApiKey(t, old);

      await regen(old.appname, '?grace_seconds=60', { roles: [] }).expect(200);

      expect((await readWith(old, before.access_token)).status).toBe(403);
    });
  });

  describe('at the end of the grace', () => {
    it('when the grace is about to end, then the old appkey and its sessions still work; just after it, they fail as after an immediate regen', async () => {
      const old = await createApiKey(t, { role: 'viewer' });
      const openedBefore = await loginWithApiKey(t, old);
      const { next, graceEndsAfter, graceEndsBy } = await roll(old, 6);
      const openedDuring = await loginWithApiKey(t, old);

      // Room for a slow machine between the checks and the end: PGlite under parallel suites once took over 1.5 s.
      await sleep(Math.max(0, graceEndsAfter - 3000 - Date.now()));
      // Just before the end: everything of the old appkey still works.
      await readWith(old, openedBefore.access_token).expect(200);
      await readWith(old, openedDuring.access_token).expect(200);
      expect((await exchange(old)).status).toBe(200);

      await sleep(Math.max(0, graceEndsBy + 300 - Date.now()));
      // Just after: nothing of the old appkey works, exactly like an immediate regen.
      const [exchangeAfter, readBefore, readDuring, refreshAfter, introspectAfter] = await Promise.all([
        exchange(old),
        readWith(old, openedBefore.access_token),
        readWith(old, openedDuring.access_token),
        refresh(openedDuring),
        introspect(t, admin, { token: openedDuring.access_token }),
      ]);
      expectError(exchangeAfter, 401, 'Unauthorized', 'Invalid request token');
      expectInvalidToken(readBefore);
      expect(readDuring.status).toBe(401);
      expect(refreshAfter.status).toBe(401);
      expect(introspectAfter.body).toEqual({ active: false });
      // The new appkey is untouched by the end of the grace.
      expect((await exchange(next)).status).toBe(200);
    });

    it('when a refresh token from the old appkey is rotated during the grace, then the new tokens still end with the grace', async () => {
      const old = await createApiKey(t, { role: 'viewer' });
      const before = await loginWithApiKey(t, old);
      const { graceEndsBy } = await roll(old, 2);

      const rotated = (await refresh(before).expect(200)).body as TokenResponse;
      await sleep(Math.max(0, graceEndsBy + 300 - Date.now()));

      expect((await readWith(old, rotated.access_token)).status).toBe(401);
      expect((await refresh(rotated)).status).toBe(401);
    });
  });

  describe('at most two appkeys', () => {
    it('when a key is regenerated again during a grace, then the first appkey and its sessions fail at once and the second gets the new grace', async () => {
      const first = await createApiKey(t, { role: 'viewer' });
      const firstSession = await loginWithApiKey(t, first);
      const { next: second } = await roll(first, 60);
      const secondSession = await loginWithApiKey(t, second);

      const { next: third } = await roll(second, 60);

      expect((await exchange(first)).status).toBe(401);
      expect((await readWith(first, firstSession.access_token)).status).toBe(401);
      expect((await exchange(second)).status).toBe(200);
      await readWith(second, secondSession.access_token).expect(200);
      expect((await exchange(third)).status).toBe(200);
    });

    it('when a key is regenerated without a grace during a grace, then both older appkeys fail at once', async () => {
      const first = await createApiKey(t, { role: 'viewer' });
      const { next: second } = await roll(first, 60);
      const secondSession = await loginWithApiKey(t, second);

      const { next: third } = await roll(second, 0);

      expect((await exchange(first)).status).toBe(401);
      expect((await exchange(second)).status).toBe(401);
      expect((await readWith(second, secondSession.access_token)).status).toBe(401);
      expect((await exchange(third)).status).toBe(200);
    });
  });

  describe('grace_seconds=0 and the default', () => {
    it.each([['?grace_seconds=0'], ['']])('when regenerated with "%s", then the old appkey and its sessions fail at once', async (query) => {
      const old = await createApiKey(t, { role: 'viewer' });
      const before = await loginWithApiKey(t, old);

      await regen(old.appname, query).expect(200);

      expect((await exchange(old)).status).toBe(401);
      expect((await readWith(old, before.access_token)).status).toBe(401);
    });

    it('when grace_seconds is the maximum, 604800, then it is accepted', async () => {
      const old = await createApiKey(t, { role: 'viewer' });

      await roll(old, 604_800);

      expect((await exchange(old)).status).toBe(200);
    });
  });

  describe('bad grace_seconds', () => {
    it.each([['-1'], ['604801'], ['1.5'], ['abc'], ['']])(
      'when grace_seconds is "%s", then 400 naming it, nothing changes and the appkey still works',
      async (value) => {
        const key = await createApiKey(t, { role: 'viewer', description: 'original' });
        const before = (await readKey(t, key.appname)).body;

        const res = await regen(key.appname, `?grace_seconds=${value}`, { description: 'changed', roles: ['viewer'] });

        expectError(res, 400, 'BadRequest', 'query.grace_seconds');
        expect((await readKey(t, key.appname)).body).toEqual(before);
        expect((await exchange(key)).status).toBe(200);
      },
    );

    it('when the query carries another parameter, then 400 naming it and nothing changes', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      const res = await regen(key.appname, '?grace=60');

      expectError(res, 400, 'BadRequest', 'unknown field "grace"');
      expect((await exchange(key)).status).toBe(200);
    });
  });

  describe('the caps of grace_seconds by the caller\'s role (Hardening, round two)', () => {
    it('when an editor asks for more than 3600 s, then 400 naming grace_seconds and the cap, and nothing changes; 3600 s is accepted', async () => {
      const editor = await tokenForRole(t, 'editor');
      const key = await createApiKey(t, { role: 'viewer', description: 'original' });
      const before = (await readKey(t, key.appname)).body;
      const asEditor = (grace: number) => t.http().put(`${regenPath(key.appname)}?grace_seconds=${grace}`).set(bearer(editor)).send({ roles: ['viewer'] });

      const refused = await asEditor(3_601);

      expectError(refused, 400, 'BadRequest', /grace_seconds.*3600/);
      expect((await readKey(t, key.appname)).body).toEqual(before);
      expect((await exchange(key)).status).toBe(200);
      expect((await asEditor(3_600)).status).toBe(200);
    });

    it('when an admin asks for 604800 s, then it is accepted, and one second more is 400', async () => {
      const key = await createApiKey(t, { role: 'viewer' });

      expect((await regen(key.appname, '?grace_seconds=604801')).status).toBe(400);
      expect((await regen(key.appname, '?grace_seconds=604800')).status).toBe(200);
    });
  });
});
