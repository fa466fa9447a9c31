import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey } from '../../helpers/factories';
import {
  ADMITTED_STATUS,
  AUTHENTICATION_PATHS,
  REFUSAL_OF,
  authenticate,
  createKeyWithPolicy,
  grantsFor,
  nowSeconds,
  refusedEventsOf,
  type AuthenticationPath,
  type Grants,
} from './support';

/**
 * Contract, "Key policies", "Authentication": every path a key authenticates by checks, after its
 * secret or signature checked out, enabled, expiry, address, rate limit and credits, in that order,
 * each refusal the route's own (401, invalid_client or invalid_grant; 429 with Retry-After where
 * waiting helps), its message naming the reason, and a token.refused event naming it.
 */
describe('key policies: every authentication path refuses for every reason', () => {
  let t: TestApp;
  let grants: Grants;
  /** The policies' clock runs this many seconds ahead of the real one. */
  let ahead = 0;

  beforeAll(async () => {
    t = await startTestApp({}, { clock: () => Date.now() / 1000 + ahead });
    grants = await grantsFor(t);
  });
  afterAll(() => t.close());
  afterEach(() => {
    ahead = 0;
  });

  const REASONS = [
    { reason: 'disabled', message: 'API key disabled', policy: () => ({ enabled: false }) },
    { reason: 'expired', message: 'API key expired', policy: () => ({ expires_at: nowSeconds() + 60 }), later: 61 },
    { reason: 'address_not_allowed', message: 'address not allowed for this API key', policy: () => ({ allowed_addresses: ['203.0.113.0/24', '2001:db8::/32'] }) },
    { reason: 'rate_limited', message: 'API key rate limit reached', policy: () => ({ rate_limit: { limit: 1, window_seconds: 86_400 } }), spend: 1 },
    { reason: 'usage_exceeded', message: 'API key usage limit reached', policy: () => ({ credits: { remaining: 1 } }), spend: 1 },
  ] as const;

  describe.each(AUTHENTICATION_PATHS)('%s', (path: AuthenticationPath) => {
    it.each(REASONS)('when the key is refused as $reason, then the route refuses it in its own way, names the reason, and records token.refused', async (c) => {
      const key = await createKeyWithPolicy(t, c.policy());
      for (let i = 0; i < ('spend' in c ? c.spend : 0); i++) expect((await authenticate(t, path, key, grants)).status).toBe(ADMITTED_STATUS[path]);
      if ('later' in c) ahead = c.later;

      const res = await authenticate(t, path, key, grants);

      const expected = REFUSAL_OF[path];
      const waits = c.reason === 'rate_limited';
      expect(res.status).toBe(waits ? 429 : expected.status);
      expect(res.body).toMatchObject({ message: c.message });
      if (waits) {
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
        expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(86_400);
        expect(res.body).toEqual({ status: 429, name: 'TooManyRequests', message: c.message });
      } else if (expected.error) {
        expect(res.body).toEqual({ status: expected.status, name: expected.status === 401 ? 'Unauthorized' : 'BadRequest', message: c.message, error: expected.error, error_description: c.message });
      } else {
        expect(res.body).toEqual({ status: 401, name: 'Unauthorized', message: c.message });
      }
      expect(await refusedEventsOf(t, res)).toEqual([{ actor: `api_key:${key.appname}`, appname: key.appname, details: { route: expect.any(String), reason: c.reason } }]);
    });

    it('when credits run out and a refill will bring them back, then the refusal is a 429 with Retry-After until the refill', async () => {
      const key = await createKeyWithPolicy(t, { credits: { remaining: 0, refill: { amount: 5, interval: 'day' } } });

      const res = await authenticate(t, path, key, grants);

      expect(res.status).toBe(429);
      expect(res.body).toEqual({ status: 429, name: 'TooManyRequests', message: 'API key usage limit reached' });
      const untilMidnight = 86_400 - (nowSeconds() % 86_400);
      expect(Math.abs(Number(res.headers['retry-after']) - untilMidnight)).toBeLessThanOrEqual(2);
    });

    it('when the secret is wrong or the key unknown, then the refusal tells no reason and records none', async () => {
      const key = await createKeyWithPolicy(t, { enabled: false });
      const unknown = await createApiKey(t);

      const wrong = await authenticate(t, path, { appname: key.appname, appkey: unknown.appkey }, grants);
      const missing = await authenticate(t, path, { appname: 'no-such-key', appkey: unknown.appkey }, grants);

      for (const res of [wrong, missing]) {
        expect(res.status).toBe(REFUSAL_OF[path].status);
        expect(JSON.stringify(res.body)).not.toMatch(/disabled|expired|address|rate|usage/i);
        expect(await refusedEventsOf(t, res)).toEqual([]);
      }
    });
  });

  it('when a key fails every check, then each refusal names the first check it fails, in the contract order', async () => {
    const key = await createKeyWithPolicy(t, {
      enabled: false,
      expires_at: nowSeconds() + 60,
      allowed_addresses: ['203.0.113.7'],
      rate_limit: { limit: 1, window_seconds: 86_400 },
      credits: { remaining: 0 },
    });
    const policy = { expires_at: nowSeconds() + 60, allowed_addresses: ['203.0.113.7'], rate_limit: { limit: 1, window_seconds: 86_400 }, credits: { remaining: 0 } };
    const reasons: unknown[] = [];
    const refusedAs = async () => reasons.push((await refusedEventsOf(t, await authenticate(t, 'api-key route', key, grants)))[0]?.details.reason);
    const { putPolicy } = await import('./support');

    await refusedAs();
    await putPolicy(t, key.appname, { ...policy, enabled: true });
    ahead = 61;
    await refusedAs();
    ahead = 0;
    await putPolicy(t, key.appname, { ...policy, expires_at: null });
    await refusedAs();
    await putPolicy(t, key.appname, { ...policy, expires_at: null, allowed_addresses: [] });
    await refusedAs();
    await putPolicy(t, key.appname, { ...policy, expires_at: null, allowed_addresses: [], rate_limit: null });
    await refusedAs();

    expect(reasons).toEqual(['disabled', 'expired', 'address_not_allowed', 'rate_limited', 'usage_exceeded']);
  });
});
