/**
 * The cost of a key policy on the API-key exchange (issue #34): the same exchange with keys whose
 * policy sets every field that a login checks or counts (addresses, permissions, rate limit,
 * credits, expiry, idle rule) against keys without a policy, the same service on the same database,
 * in one run.
 */
import { createKey, mapLimit, passwordGrant, startService } from '../harness/service';
import { exchangeRequests, type Dataset, type Scenario } from './index';

export const POLICY_EXCHANGE_ID = 'policy-exchange';

/**
 * Every field set, as a careful owner would: the loopback client among a dozen ranges (the last one
 * it matches, so every range is tried), two permissions, a rate limit and credits the run never
 * reaches, an expiry and an idle rule that never fire during it.
 */
export function fullPolicy(now = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  return {
    expires_at: now + 30 * 86_400,
    enabled: true,
    allowed_addresses: [
      ...Array.from({ length: 10 }, (_, i) => `10.${i}.0.0/16`),
      '2001:db8::/32',
      '127.0.0.0/8',
    ],
    permissions: ['billing:read', 'reports:export'],
    rate_limit: { limit: 1_000_000, window_seconds: 60 },
    credits: { remaining: 1_000_000_000_000, refill: { amount: 1_000_000_000_000, interval: 'day' } },
    max_idle_days: 365,
  };
}

export const policyScenario: Scenario = {
  id: POLICY_EXCHANGE_ID,
  title: 'api-key exchange, every policy field set',
  ours: 'POST /api/v1/auth/token, keys whose policy sets every field (addresses, permissions, rate limit, credits, expiry, idle)',
  floor: 'the same service and exchange with keys without a policy',
  target: 0.85,
  async setup(ctx) {
    const data = ctx.datasets.main;
    const ours = await startService('ours (policy)', data.db, ctx.service);
    const admin = (await passwordGrant(ours.baseUrl)).access_token;
    // As many keys as the plain side exchanges with, made through the API with their policy.
    const names = data.keys.map((_, i) => `bench-policy-${process.pid}-${String(i).padStart(3, '0')}`);
    const policyKeys: Dataset['keys'] = await mapLimit(names, 4, async (appname) => ({ appname, appkey: await createKey(ours.baseUrl, admin, appname, fullPolicy()) }));
    const plain = await startService('ours (no policy)', data.db, ctx.service);
    return {
      ours: { label: 'policy', handle: ours, plan: () => Promise.resolve({ requests: exchangeRequests(policyKeys) }) },
      floor: { label: 'no policy', handle: plain, plan: () => Promise.resolve({ requests: exchangeRequests(data.keys) }) },
    };
  },
};
