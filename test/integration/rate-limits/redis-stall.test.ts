import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/app';
import { onPglite } from '../../helpers/database';
import { bearer, createUser, loginAs, type TestUser } from '../../helpers/factories';
import { describeWithRedisServer, freePort, startRedis, stopRedis } from '../../helpers/redis-server';
import { REDIS_DOWN_WARNING } from '../../../src/cache/redis-connection';
import { sleep } from '../auth/support';
import { itUnless } from '../../helpers/skips';

/** One request, with its status and how long its answer took; a hung one is cut off at 5 s (status 0). */
async function timed(send: () => PromiseLike<{ status: number }>): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  try {
    const res = await send();
    return { status: res.status, ms: Date.now() - started };
  } catch {
    return { status: 0, ms: Date.now() - started };
  }
}

/** What the token routes' RateLimit header (draft 8) says is left in the window. */
function remainingOf(res: { headers: Record<string, string> }): number {
  const match = /; ?r=(\d+)/.exec(res.headers['ratelimit'] ?? '');
  if (!match) throw new Error(`no RateLimit header: ${JSON.stringify(res.headers)}`);
  return Number(match[1]);
}

/** The log lines so far that contain `text`. */
const linesWith = (t: TestApp, text: string) => t.logs().split('\n').filter((line) => line.includes(text));

/** GET /readyz's body, polled until its `redis` is `wanted` (at most 10 s). */
async function readinessUntil(t: TestApp, wanted: 'up' | 'down'): Promise<unknown> {
  let body: unknown;
  for (let i = 0; i < 50; i++) {
    body = (await t.http().get('/readyz').timeout(5_000)).body;
    if ((body as { redis?: string }).redis === wanted) break;
    await sleep(200);
  }
  return body;
}

// On PGlite one process serves every test app's database a statement at a time, so under the
// parallel suites the database alone can take longer than the bounds: they are checked on PostgreSQL.
describeWithRedisServer('Redis stall test')('Redis that stalls is Redis down (Hardening, round two)', () => {
  let t: TestApp;
  let redis: ChildProcess;
  let user: TestUser;
  let access: string;

  beforeAll(async () => {
    const port = await freePort();
    redis = await startRedis(port);
    t = await startTestApp({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      RATE_LIMIT_REDIS_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_TOKEN_REQUESTS: '20',
      RATE_LIMIT_TOKEN_WINDOW: '60',
    });
    user = await createUser(t, { role: 'viewer' });
    access = (await loginAs(t, user)).access_token;
  });
  afterAll(async () => {
    if (redis) {
      redis.kill('SIGCONT');
      await stopRedis(redis);
    }
    await t?.close();
  });

  itUnless(onPglite() && { what: 'the Redis stall test', why: 'its time bounds leave no room for PGlite, which serves every test app a statement at a time; it runs on the PostgreSQL run' })(
    'when the Redis process is stopped mid-run (SIGSTOP), then every route answers within about a second, /readyz says down, one warning is logged and no trace; after SIGCONT limiting is back',
    async () => {
      const refresh = () => t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: 'not-a-token' }).timeout(5_000);
      const calls = [
        refresh,
        () => t.http().post('/api/auth/bearer/token').type('form').send(user).timeout(5_000),
        () => t.http().get('/api/v1/api-keys').set(bearer(access)).timeout(5_000),
        () => t.http().get('/api/v1/api-keys').set(bearer('not-a-token')).timeout(5_000),
        () => t.http().get('/readyz').timeout(5_000),
      ];
      expect((await t.http().get('/readyz')).body).toEqual({ status: 'ok', redis: 'up' });
      expect(remainingOf(await refresh())).toBeGreaterThan(remainingOf(await refresh()));

      redis.kill('SIGSTOP');
      const during: { status: number; ms: number }[] = [];
      for (let round = 0; round < 3; round++) for (const call of calls) during.push(await timed(call));
      const readiness = await readinessUntil(t, 'down');

      expect(during.map((d) => d.status)).toEqual(Array(3).fill([401, 200, 200, 401, 200]).flat());
      expect(Math.max(...during.map((d) => d.ms))).toBeLessThan(1_200);
      expect(readiness).toEqual({ status: 'ok', redis: 'down' });
      expect(linesWith(t, REDIS_DOWN_WARNING)).toHaveLength(1);
      expect(linesWith(t, 'express-rate-limit')).toEqual([]);
      expect(linesWith(t, '"stack"')).toEqual([]);

      redis.kill('SIGCONT');
      expect(await readinessUntil(t, 'up')).toEqual({ status: 'ok', redis: 'up' });
      const [first, second] = [await refresh(), await refresh()];
      expect(remainingOf(first)).toBeGreaterThan(remainingOf(second));
      expect(linesWith(t, REDIS_DOWN_WARNING)).toHaveLength(1);
    },
    60_000,
  );
});
