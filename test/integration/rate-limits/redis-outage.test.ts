import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/app';
import { onPglite } from '../../helpers/database';
import { itUnless } from '../../helpers/skips';
import { expectError } from '../../helpers/errors';
import { sleep } from '../auth/support';
import { describeWithRedisServer, freePort, startRedis, stopRedis } from '../../helpers/redis-server';
import { REDIS_DOWN_WARNING } from '../../../src/cache/redis-connection';

/** A request to a token route (counted per address), with how long its answer took; a hung one is cut off at 5 s. */
async function timedRefresh(t: TestApp): Promise<{ status: number; ms: number; res?: Awaited<ReturnType<ReturnType<TestApp['http']>['post']>> }> {
  const started = Date.now();
  try {
    const res = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: 'not-a-token' }).timeout(5_000);
    return { status: res.status, ms: Date.now() - started, res };
  } catch {
    return { status: 0, ms: Date.now() - started };
  }
}

/** GET /readyz, with how long its answer took. */
async function timedReadiness(t: TestApp): Promise<{ status: number; body: unknown; ms: number }> {
  const started = Date.now();
  try {
    const res = await t.http().get('/readyz').timeout(5_000);
    return { status: res.status, body: res.body, ms: Date.now() - started };
  } catch {
    return { status: 0, body: undefined, ms: Date.now() - started };
  }
}

/** How many times the outage warning was logged. */
const outageWarnings = (t: TestApp) => t.logs().split('\n').filter((line) => line.includes(REDIS_DOWN_WARNING)).length;

/** Polls /readyz until it says Redis is up (at most 10 s); returns its last answer. */
async function readyWithRedisUp(t: TestApp): Promise<{ status: number; body: unknown; ms: number }> {
  let answer = await timedReadiness(t);
  for (let i = 0; i < 50 && (answer.body as { redis?: string } | undefined)?.redis !== 'up'; i++) {
    await sleep(200);
    answer = await timedReadiness(t);
  }
  return answer;
}

const limitedEnv = (port: number) => ({
  REDIS_URL: `redis://127.0.0.1:${port}`,
  RATE_LIMIT_REDIS_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
  RATE_LIMIT_ENABLED: 'true',
  RATE_LIMIT_TOKEN_REQUESTS: '3',
  RATE_LIMIT_TOKEN_WINDOW: '60',
});

describeWithRedisServer('Redis outage tests')('Redis down is not the service down (Hardening)', () => {
  let t: TestApp;
  let port: number;
  let redis: ChildProcess | undefined;

  // express-rate-limit reports every store error on console.error, a ClientOfflineError with its
  // stack per request while Redis is away: provoked here on purpose, so kept out of the run's output,
  // and checked to be nothing but the limiter's.
  let consoleErrors: jest.SpyInstance;
  beforeAll(() => {
    consoleErrors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterAll(() => {
    const others = consoleErrors.mock.calls.map((args: unknown[]) => String(args[0])).filter((first) => !first.startsWith('express-rate-limit: '));
    consoleErrors.mockRestore();
    expect(others).toEqual([]);
  });

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    t = await startTestApp(limitedEnv(port));
  });
  afterAll(async () => {
    await t?.close();
    if (redis) await stopRedis(redis);
  });

  // Its timings bound how long Redis may hold a request. On PGlite one process serves every test app's
  // database a statement at a time, so under the parallel suites the database alone can take longer:
  // the bounds are checked on the PostgreSQL run.
  itUnless(onPglite() && { what: 'the timed Redis outage test', why: 'on PGlite one process serves every test app a statement at a time, which its time bounds do not allow for; it runs on the PostgreSQL run' })('when Redis stops and comes back, then requests pass within about a second meanwhile, /readyz says so, one warning is logged, and limits resume', async () => {
    // Redis up: the fourth request of the window is refused.
    expect(await timedReadiness(t)).toMatchObject({ status: 200, body: { status: 'ok', redis: 'up' } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await timedRefresh(t)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);

    // Redis down: every answer comes quickly, as if there were no limits.
    await stopRedis(redis!);
    const during = [];
    for (let i = 0; i < 6; i++) during.push(await timedRefresh(t));
    const readiness = await timedReadiness(t);
    await sleep(1_500); // reconnect attempts go on meanwhile
    during.push(await timedRefresh(t));

    expect(during.map((d) => d.status)).toEqual([401, 401, 401, 401, 401, 401, 401]);
    expect(Math.max(...during.map((d) => d.ms))).toBeLessThan(1_500);
    expectError(during[0]!.res!, 401, 'Unauthorized');
    expect(readiness).toMatchObject({ status: 200, body: { status: 'ok', redis: 'down' } });
    expect(readiness.ms).toBeLessThan(1_500);
    expect(outageWarnings(t)).toBe(1);
    // One warning per outage, and nothing per request: no limiter's complaint, no stack trace (Hardening, round two).
    expect(t.logs().split('\n').filter((line) => /express-rate-limit|"stack"/.test(line))).toEqual([]);

    // Redis back (empty, on the same port): limiting resumes by itself.
    redis = await startRedis(port);
    expect(await readyWithRedisUp(t)).toMatchObject({ status: 200, body: { status: 'ok', redis: 'up' } });
    const after = [];
    for (let i = 0; i < 4; i++) after.push((await timedRefresh(t)).status);
    expect(after).toEqual([401, 401, 401, 429]);
    expect(outageWarnings(t)).toBe(1);
  }, 60_000);

  describe('when Redis is away at start', () => {
    let late: TestApp | undefined;
    let latePort: number;
    let lateRedis: ChildProcess | undefined;
    afterAll(async () => {
      await late?.close();
      if (lateRedis) await stopRedis(lateRedis);
    });

    it('then the service starts and answers without limits, /readyz says redis down, and limits count once Redis comes', async () => {
      latePort = await freePort();
      late = await startTestApp(limitedEnv(latePort));

      const during = [];
      for (let i = 0; i < 5; i++) during.push(await timedRefresh(late));
      expect(during.map((d) => d.status)).toEqual([401, 401, 401, 401, 401]);
      expect(Math.max(...during.map((d) => d.ms))).toBeLessThan(1_500);
      expect(await timedReadiness(late)).toMatchObject({ status: 200, body: { status: 'ok', redis: 'down' } });
      expect(outageWarnings(late)).toBe(1);

      lateRedis = await startRedis(latePort);
      expect(await readyWithRedisUp(late)).toMatchObject({ status: 200, body: { status: 'ok', redis: 'up' } });
      const after = [];
      for (let i = 0; i < 4; i++) after.push((await timedRefresh(late)).status);
      expect(after).toEqual([401, 401, 401, 429]);
    }, 60_000);
  });
});
