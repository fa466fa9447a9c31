import { randomUUID } from 'node:crypto';
import { sha256 } from '../../../src/crypto/digest';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import { findKeysWithLivePrincipals, type KeyLookup } from '../../../src/verification/verify.repository';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, tokenForRole, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { createKeyWithPolicy } from '../key-policies/support';

/**
 * The statement that reads, for a batch of verifications, each bearer's live principal and the key
 * presented beside it, on the real database. Over HTTP which verifications share a batch depends on
 * timing; here the batch is chosen, so that no answer can reach another lookup or a dead session.
 */
describe('findKeysWithLivePrincipals (verifications, many in one statement)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** A fresh user of `role`, logged in: its name and its session's id (the token's `sid`). */
  async function sessionOf(role: 'viewer' | 'admin'): Promise<{ user: TestUser; sessionId: string; token: string }> {
    const user = await createUser(t, { role });
    const token = (await loginAs(t, user)).access_token;
    return { user, sessionId: sidOf(token), token };
  }

  const sidOf = (token: string) => claimsOf(token).sid as string;
  const lookup = (sessionId: string, presented: string, address: string | null = '127.0.0.1'): KeyLookup => ({ sessionId, address, digest: sha256(presented), now: Date.now() / 1000 });

  it('when live, revoked and unknown sessions share a batch with known and unknown keys, then each lookup gets its own principal and key, and a dead session gets neither', async () => {
    const [viewer, admin, revoked] = await Promise.all([sessionOf('viewer'), sessionOf('admin'), sessionOf('viewer')]);
    const [first, second] = await Promise.all([createApiKey(t), createApiKey(t)]);
    await t.db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1', [revoked.sessionId]);

    const found = await findKeysWithLivePrincipals(t.db, [
      lookup(viewer.sessionId, first.appkey),
      lookup(revoked.sessionId, first.appkey),
      lookup(admin.sessionId, second.appkey),
      lookup(randomUUID(), second.appkey),
      lookup(viewer.sessionId, 'ak_not-a-key-anyone-has'),
      lookup(admin.sessionId, first.appkey),
    ]);

    expect(found.map(({ live, alongside }) => [live?.name ?? null, live?.role ?? null, alongside?.appname ?? null])).toEqual([
      [viewer.user.username, 'viewer', first.appname],
      [null, null, null],
      [admin.user.username, 'admin', second.appname],
      [null, null, null],
      [viewer.user.username, 'viewer', null],
      [admin.user.username, 'admin', first.appname],
    ]);
  });

  it('when a key’s session calls from addresses its policy allows and refuses in one batch, beside a disabled user and a previous appkey in its grace, then each lookup is judged alone', async () => {
    const bearerKey = await createKeyWithPolicy(t, { allowed_addresses: ['127.0.0.1', '10.0.0.0/8'] });
    const keySession = sidOf((await loginWithApiKey(t, bearerKey)).access_token);
    const disabled = await sessionOf('viewer');
    await t.services.users.disable(disabled.user.username, CLI_CONTEXT);
    const viewer = await sessionOf('viewer');
    const regenerated = await createApiKey(t);
    const admin = await tokenForRole(t, 'admin');
    const regen = await t.http().put(`/api/v1/api-keys/${regenerated.appname}/regen`).query({ grace_seconds: 60 }).set(bearer(admin)).send({ roles: [] });
    expect(regen.status).toBe(200);

    const found = await findKeysWithLivePrincipals(t.db, [
      lookup(keySession, regenerated.appkey, '10.1.2.3'),
      lookup(keySession, regenerated.appkey, '192.0.2.1'),
      lookup(keySession, regenerated.appkey, null),
      lookup(disabled.sessionId, regenerated.appkey),
      lookup(viewer.sessionId, regenerated.appkey),
      lookup(viewer.sessionId, regen.body.data.appkey as string),
      lookup(keySession, regen.body.data.appkey as string),
    ]);

    expect(found.map(({ live, alongside }) => [live?.name ?? null, alongside?.appname ?? null, alongside?.generation ?? null])).toEqual([
      [bearerKey.appname, regenerated.appname, 1],
      [null, null, null],
      [null, null, null],
      [null, null, null],
      [viewer.user.username, regenerated.appname, 1],
      [viewer.user.username, regenerated.appname, 2],
      [bearerKey.appname, regenerated.appname, 2],
    ]);
  });

  it('when many callers verify different keys at once over HTTP, then each answer names the key its own request presented', async () => {
    const callers = await Promise.all([sessionOf('viewer'), sessionOf('viewer'), sessionOf('admin')]);
    const keys = await Promise.all(Array.from({ length: 5 }, () => createApiKey(t)));

    const requests = Array.from({ length: 60 }, (_, i) => ({ caller: callers[i % 3]!, key: keys[i % 5]! }));
    const answers = await Promise.all(
      requests.map(({ caller, key }) => t.http().post('/api/v1/keys/verify').set(bearer(caller.token)).send({ key: key.appkey })),
    );

    expect(answers.map((res) => [res.status, res.body.code, res.body.appname])).toEqual(requests.map(({ key }) => [200, 'VALID', key.appname]));
  });
});
