/**
 * Verification and usage counting (issue #35): POST /api/v1/keys/verify against its floors (an
 * Express app doing the bearer ES256 check, one SELECT by SHA-256 digest and a JSON answer; plus one
 * UPDATE of credits for keys with credits), the API-key exchange with usage counting on against off
 * (USAGE_COUNTING, which only this benchmark turns off), and verification with a million keys
 * against 100.
 */
import type autocannon from 'autocannon';
import { createKey, ISSUER, mapLimit, passwordGrant, publicJwk, startService } from '../harness/service';
import { exchangeRequests, serviceBearer, startFloor, type Dataset, type Scenario } from './index';

/** POST /api/v1/keys/verify with one bearer token, the keys in turn. */
export function verifyRequests(token: string, keys: Dataset['keys']): autocannon.Request[] {
  let i = 0;
  return [
    {
      method: 'POST',
      path: '/api/v1/keys/verify',
      setupRequest: (req) => ({
        ...req,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ key: keys[i++ % keys.length]!.appkey }),
      }),
    },
  ];
}

const fixed = (requests: autocannon.Request[]) => () => Promise.resolve({ requests });

/** The p99 of ours at most this times the floor's, in the median round (issue #35). */
const P99_TARGET = 2;

export const verificationScenarios: Scenario[] = [
  {
    id: 'verify',
    title: 'verify, no policy',
    ours: 'POST /api/v1/keys/verify, keys without a policy (1,000 keys in the table)',
    floor: 'ES256 verify of the bearer + one SELECT by SHA-256 digest + a JSON answer',
    target: 0.9,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const ours = await startService('ours', data.db, ctx.service);
      const token = await serviceBearer(ours.baseUrl, data.keys[0]!);
      const floor = await startFloor('verify', ctx, { FLOOR_PUBLIC_JWK: JSON.stringify(await publicJwk(ours.baseUrl)), FLOOR_ISSUER: ISSUER });
      return {
        ours: { label: 'ours', handle: ours, plan: fixed(verifyRequests(token, data.keys)) },
        floor: { label: 'floor', handle: floor, plan: fixed(verifyRequests(token, data.keys)) },
      };
    },
    extra: ({ ours, floor }) => ({ met: ours.p99 <= P99_TARGET * floor.p99, text: `p99 ours ${ours.p99} ms against the floor's ${floor.p99} ms (target <= ${P99_TARGET} x)` }),
  },
  {
    id: 'verify-credits',
    title: 'verify, key with credits',
    ours: 'POST /api/v1/keys/verify, keys with credits (each VALID spends one, exactly)',
    floor: 'the verify floor plus one conditional UPDATE of the credits',
    target: 0.8,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const ours = await startService('ours', data.db, ctx.service);
      const admin = (await passwordGrant(ours.baseUrl)).access_token;
      const names = data.keys.map((_, i) => `bench-credits-${process.pid}-${String(i).padStart(3, '0')}`);
      const keys: Dataset['keys'] = await mapLimit(names, 4, async (appname) => ({
        appname,
        appkey: await createKey(ours.baseUrl, admin, appname, { credits: { remaining: 1_000_000_000_000 } }),
      }));
      const token = await serviceBearer(ours.baseUrl, data.keys[0]!);
      const floor = await startFloor('verify', ctx, { FLOOR_PUBLIC_JWK: JSON.stringify(await publicJwk(ours.baseUrl)), FLOOR_ISSUER: ISSUER, FLOOR_CREDITS: 'true' });
      return {
        ours: { label: 'ours', handle: ours, plan: fixed(verifyRequests(token, keys)) },
        floor: { label: 'floor', handle: floor, plan: fixed(verifyRequests(token, keys)) },
      };
    },
  },
  {
    id: 'usage-exchange',
    title: 'api-key exchange, usage counted',
    ours: 'POST /api/v1/auth/token with usage counting on (the default)',
    floor: 'the same service with USAGE_COUNTING=false (a setting only this benchmark uses)',
    target: 0.97,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const counted = await startService('counted', data.db, ctx.service);
      const uncounted = await startService('uncounted', data.db, ctx.service, { USAGE_COUNTING: 'false' });
      return {
        ours: { label: 'counted', handle: counted, plan: () => Promise.resolve({ requests: exchangeRequests(data.keys) }) },
        floor: { label: 'uncounted', handle: uncounted, plan: () => Promise.resolve({ requests: exchangeRequests(data.keys) }) },
      };
    },
  },
];

/** Verification with `count` keys in the table against the same with 100 (the million dataset, as the other million scenarios). */
export function millionVerifyScenario(count: number): Scenario {
  const thousands = count.toLocaleString('en-US');
  return {
    id: 'million-verify',
    title: `${thousands} keys: verify`,
    ours: `POST /api/v1/keys/verify with ${thousands} keys and live sessions`,
    floor: 'the same service and scenario with 100 keys',
    target: 0.9,
    async setup(ctx) {
      const { million, small } = ctx.datasets;
      const big = await startService(`ours@${count}`, million.db, ctx.service);
      const little = await startService('ours@100', small.db, ctx.service);
      const [bigToken, littleToken] = await Promise.all([serviceBearer(big.baseUrl, million.keys[0]!), serviceBearer(little.baseUrl, small.keys[0]!)]);
      return {
        ours: { label: big.label, handle: big, plan: fixed(verifyRequests(bigToken, million.keys)) },
        floor: { label: little.label, handle: little, plan: fixed(verifyRequests(littleToken, small.keys)) },
      };
    },
  };
}
