import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { bearer, tokenForRole } from '../../helpers/factories';
import { redisMissing, REDIS_URL } from '../../helpers/redis';
import { describeUnless } from '../../helpers/skips';
import { basic, createKeyWithPolicy } from '../key-policies/support';

/**
 * Contract, "Verifying keys": every verification of an existing key counts against its rate limit,
 * the same counter as the token routes', across instances through Redis when REDIS_URL is set.
 */
const withoutRedis = redisMissing('the test of verification sharing the rate limit through Redis');

(withoutRedis ? describeUnless(withoutRedis) : onSharedServerOnly())('verification: the rate limit shared with the token routes and across instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const shared = { REDIS_URL, RATE_LIMIT_REDIS_PREFIX: `verifyrl:${randomBytes(4).toString('hex')}:` };
    a = await startTestApp(shared);
    b = await startTestApp(shared, { joining: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('when verifications and token requests of a key alternate between two instances, then together they spend one limit', async () => {
    const key = await createKeyWithPolicy(a, { rate_limit: { limit: 4, window_seconds: 3600 } });
    const viewer = await tokenForRole(a, 'viewer');
    const verify = (t: TestApp) => t.http().post('/api/v1/keys/verify').set(bearer(viewer)).send({ key: key.appkey });
    const token = (t: TestApp) => t.http().post('/oauth2/token').type('form').set('Authorization', basic(key.appname, key.appkey)).send({ grant_type: 'client_credentials' });

    const first = await verify(a);
    expect((await token(b)).status).toBe(200);
    const third = await verify(b);
    expect((await token(a)).status).toBe(200);
    const fifth = await verify(a);
    const sixth = await token(b);

    expect(first.body).toMatchObject({ code: 'VALID', rate_limit: { limit: 4, remaining: 3 } });
    expect(third.body).toMatchObject({ code: 'VALID', rate_limit: { remaining: 1 } });
    expect(fifth.body).toMatchObject({ code: 'RATE_LIMITED', rate_limit: { remaining: 0 } });
    expect(sixth.status).toBe(429);
  });
});
