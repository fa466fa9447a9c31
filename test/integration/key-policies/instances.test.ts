import { type TestApp, startTwoInstances, closeInstances } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { grantsFor, authenticate, createKeyWithPolicy, putPolicy, AUTHENTICATION_PATHS, ADMITTED_STATUS, type Grants } from './support';

/**
 * Contract, "Running at scale": every rule holds whichever instance a request reaches. Instance b
 * keeps what it read of a key (its appkeys and policy, for up to 60 s); a change made through
 * instance a must still hold on b's very next use of the key, whichever way the key authenticates.
 */
onSharedServerOnly()('key policies: a change on one instance holds at once on another', () => {
  let a: TestApp;
  let b: TestApp;
  let grants: Grants;

  beforeAll(async () => {
    [a, b] = await startTwoInstances();
    grants = await grantsFor(a);
  });
  afterAll(() => closeInstances(a, b));

  const CHANGES = [
    ['turned off', () => ({ enabled: false }), 'API key disabled'],
    ['limited to other addresses', () => ({ allowed_addresses: ['203.0.113.0/24'] }), 'address not allowed for this API key'],
    ['given no credits', () => ({ credits: { remaining: 0 } }), 'API key usage limit reached'],
    ['given an expiry two seconds away', () => ({ expires_at: Math.floor(Date.now() / 1000) + 2 }), 'API key expired'],
  ] as const;

  describe.each(AUTHENTICATION_PATHS)('%s', (path) => {
    it.each(CHANGES)('when the key is %s through one instance, then the other refuses its next use, and allows it again once undone', async (_change, policy, message) => {
      const key = await createKeyWithPolicy(a, {});
      expect((await authenticate(b, path, key, grants)).status).toBe(ADMITTED_STATUS[path]);

      const change = policy();
      expect((await putPolicy(a, key.appname, change)).status).toBe(200);
      if ('expires_at' in change) await new Promise((resolve) => setTimeout(resolve, (change.expires_at - Date.now() / 1000) * 1000 + 100));
      const refused = await authenticate(b, path, key, grants);
      await putPolicy(a, key.appname, {});
      const allowed = await authenticate(b, path, key, grants);

      expect(refused.body.message).toBe(message);
      expect(allowed.status).toBe(ADMITTED_STATUS[path]);
    });
  });
});
