import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp, startTwoInstances, closeInstances } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { redisMissing, REDIS_URL } from '../../helpers/redis';
import { describeUnless } from '../../helpers/skips';
import { describeWithRedisServer, freePort, startRedis, stopRedis } from '../../helpers/redis-server';
import { signRequestToken } from '../../helpers/tokens';
import { createKeyWithPolicy } from './support';

const exchange = (t: TestApp, key: { appname: string; appkey: string }) => t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) });
const statusesOf = async (uses: [TestApp, { appname: string; appkey: string }][]) => {
  const statuses: number[] = [];
  for (const [t, key] of uses) statuses.push((await exchange(t, key)).status);
  return statuses;
};
const LIMIT = { rate_limit: { limit: 3, window_seconds: 86_400 } };

/**
 * Contract, "Key policies", rate_limit: counted across instances through Redis when REDIS_URL is set,
 * per instance without it; the owner's policy, so RATE_LIMIT_ENABLED=false (the tests' default) does
 * not turn it off.
 */
// CI starts Redis; elsewhere, without one, this skips and the run's summary says why.
const withoutRedis = redisMissing("the test of the keys' rate limit shared through Redis");

(withoutRedis ? describeUnless(withoutRedis) : onSharedServerOnly())('key policies: the rate limit shared by two instances through Redis', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const shared = { REDIS_URL, RATE_LIMIT_REDIS_PREFIX: `keyrl:${randomBytes(4).toString('hex')}:` };
    [a, b] = await startTwoInstances(shared);
  });
  afterAll(() => closeInstances(a, b));

  it('when a key\'s uses alternate between two instances, then its fourth use is refused wherever it lands', async () => {
    const key = await createKeyWithPolicy(a, LIMIT);

    const statuses = await statusesOf([
      [a, key],
      [b, key],
      [a, key],
      [b, key],
    ]);

    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

onSharedServerOnly()('key policies: the rate limit without Redis, per instance', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await startTwoInstances();
  });
  afterAll(() => closeInstances(a, b));

  it('when a key\'s uses alternate between two instances without Redis, then each instance counts its own', async () => {
    const key = await createKeyWithPolicy(a, LIMIT);

    const statuses = await statusesOf([
      [a, key],
      [b, key],
      [a, key],
      [b, key],
      [a, key],
      [b, key],
      [a, key],
    ]);

    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });
});

describeWithRedisServer('the keys\' rate limit when Redis goes away')('key policies: the rate limit fails open with the other limits', () => {
  let t: TestApp;
  let redis: ChildProcess;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    t = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_REDIS_PREFIX: 'keyrl-outage:' });
  });
  afterAll(async () => {
    await t?.close();
    if (redis) await stopRedis(redis);
  });

  it('when Redis is down, then a key\'s uses pass within a second each as if it had no limit, and counting resumes when Redis returns', async () => {
    const counted = await createKeyWithPolicy(t, { rate_limit: { limit: 1, window_seconds: 86_400 } });
    expect(await statusesOf([[t, counted], [t, counted]])).toEqual([200, 429]);

    await stopRedis(redis);
    const key = await createKeyWithPolicy(t, { rate_limit: { limit: 1, window_seconds: 86_400 } });
    const started = Date.now();
    const whileDown = await statusesOf([[t, key], [t, key], [t, key]]);
    const elapsed = Date.now() - started;

    redis = await startRedis(port);
    const back = await createKeyWithPolicy(t, { rate_limit: { limit: 1, window_seconds: 86_400 } });
    let resumed: number[] = [];
    for (let i = 0; i < 40 && resumed[1] !== 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      resumed = await statusesOf([[t, back], [t, back]]);
    }

    expect(whileDown).toEqual([200, 200, 200]);
    expect(elapsed).toBeLessThan(3_000);
    expect(resumed[1]).toBe(429);
  });
});
