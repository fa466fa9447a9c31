import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, tokenForRole, type TestApiKey } from '../../helpers/factories';
import { basic, createKeyWithPolicy, getPolicy } from '../key-policies/support';

/**
 * Concurrent verifications of keys with credits share one statement and one commit (KeyUses), with
 * the client authentications of the same instance. Which requests share a batch depends on timing;
 * what must hold whatever it was is pinned down here (the batches themselves: test/integration/api-keys/key-uses.test.ts).
 */
const VERIFY = '/api/v1/keys/verify';

describe('POST /api/v1/keys/verify, many at once', () => {
  let t: TestApp;
  let viewer: string;

  beforeAll(async () => {
    t = await startTestApp();
    viewer = await tokenForRole(t, 'viewer');
  });
  afterAll(async () => {
    await t?.close();
  });

  const verify = (body: Record<string, unknown>) => t.http().post(VERIFY).set(bearer(viewer)).send(body);
  /** Client authentication of `key` at introspection: 200 (the token is not active) when admitted. */
  const introspect = (key: TestApiKey) => t.http().post('/oauth2/introspect').type('form').set('Authorization', basic(key.appname, key.appkey)).send({ token: 'not-a-token' });
  const remainingOf = async (appname: string) => ((await getPolicy(t, appname)).credits as { remaining: number }).remaining;

  it('when 30 verifications of a key with 12 credits arrive at once, then exactly 12 are VALID, each with its own remainder, and the rest USAGE_EXCEEDED', async () => {
    const key = await createKeyWithPolicy(t, { credits: { remaining: 12 } });

    const answers = await Promise.all(Array.from({ length: 30 }, () => verify({ key: key.appkey })));

    const valid = answers.filter((res) => res.body.code === 'VALID');
    expect(answers.filter((res) => res.body.code === 'USAGE_EXCEEDED')).toHaveLength(18);
    expect(valid.map((res) => res.body.credits.remaining as number).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(await remainingOf(key.appname)).toBe(0);
  });

  it('when verifications of mixed costs arrive at once, then a cost that no longer fits is refused and the smaller ones after it still spend, to the last credit', async () => {
    const keys = await Promise.all(Array.from({ length: 4 }, () => createKeyWithPolicy(t, { credits: { remaining: 10 } })));
    // Per key: only one 6 can fit, and whichever order they come in, it and the four 1s spend the 10 exactly.
    const costs = [6, 6, 1, 1, 1, 1];

    const answers = await Promise.all(keys.flatMap((key) => costs.map((cost) => verify({ key: key.appkey, cost }))));

    const validCosts = (k: number) => answers.slice(k * costs.length, (k + 1) * costs.length).flatMap((res, i) => (res.body.code === 'VALID' ? [costs[i]] : []));
    for (const [k, key] of keys.entries()) {
      expect(validCosts(k).sort()).toEqual([1, 1, 1, 1, 6]);
      expect(await remainingOf(key.appname)).toBe(0);
    }
    expect(answers.filter((res) => res.body.code !== 'VALID').every((res) => res.body.code === 'USAGE_EXCEEDED' && res.body.credits.remaining < 6)).toBe(true);
  });

  it('when verifications and client authentications of one key arrive at once, then they spend the same credits: exactly as many succeed as it had', async () => {
    const key = await createKeyWithPolicy(t, { credits: { remaining: 9 } });
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? verify({ key: key.appkey }) : introspect(key))));

    const succeeded = answers.filter((res) => res.body.code === 'VALID' || (res.status === 200 && res.body.active === false));
    const refused = answers.filter((res) => res.body.code === 'USAGE_EXCEEDED' || (res.status === 401 && res.body.error === 'invalid_client'));
    expect([succeeded.length, refused.length]).toEqual([9, 15]);
    expect(await remainingOf(key.appname)).toBe(0);
  });

  it('when a key without credits authenticates as a client while one with credits is verified, at once, then the first always succeeds and has last_used stamped', async () => {
    const counted = await createKeyWithPolicy(t, { credits: { remaining: 3 } });
    const unlimited = await createKeyWithPolicy(t, {});

    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? verify({ key: counted.appkey, cost: 2 }) : introspect(unlimited))));

    const of = (parity: 0 | 1) => answers.filter((_, i) => i % 2 === parity);
    expect(of(0).map((res) => res.status)).toEqual(Array(8).fill(200));
    expect(of(1).filter((res) => res.body.code === 'VALID')).toHaveLength(1);
    expect(await remainingOf(counted.appname)).toBe(1);
    expect((await getPolicy(t, unlimited.appname)).last_used).toEqual(expect.any(Number));
  });

});
