import { randomBytes } from 'node:crypto';
import { startServerProcess, type ServerProcess } from '../process/server-process';
import { expectError } from '../../helpers/errors';
import { redisMissing, sharedCounters } from '../../helpers/redis';
import { describeUnless } from '../../helpers/skips';

const refresh = (server: ServerProcess) =>
  fetch(`${server.baseUrl}/api/auth/bearer/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'refresh_token=not-a-token',
  });

// CI starts Redis; elsewhere, without one, these skip and the run's summary says why.
const withoutRedis = redisMissing('the tests of rate-limit counters shared through Redis');

describeUnless(withoutRedis)('rate-limit counters in Redis: two instances, one budget', () => {
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    const env = {
      ...sharedCounters('test'),
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_TOKEN_REQUESTS: '5',
      RATE_LIMIT_TOKEN_WINDOW: '60',
    };
    servers.push(await startServerProcess(env), await startServerProcess(env));
  }, 60_000);
  afterAll(() => Promise.all(servers.map((s) => s.cleanup())));

  it('when requests alternate between two instances, then the sixth one is refused wherever it lands', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const statuses: number[] = [];
    for (const server of [a, b, a, b, a]) statuses.push((await refresh(server)).status);
    const sixth = await refresh(b);

    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    expectError({ status: sixth.status, headers: Object.fromEntries(sixth.headers), body: await sixth.json() }, 429, 'TooManyRequests');
    expect(sixth.headers.get('ratelimit')).toMatch(/^"token-routes"; r=0; t=\d+$/);
  });
});

describeUnless(withoutRedis)('the account alert in Redis: two instances, one count per username', () => {
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    const env = {
      ...sharedCounters('test'),
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PASSWORD_FAILURES: '100',
      RATE_LIMIT_PASSWORD_ADDRESS_FAILURES: '100',
      LOGIN_ACCOUNT_ALERT: '3',
    };
    // A database each, as above: only Redis is shared, and the count lives there.
    servers.push(await startServerProcess(env), await startServerProcess(env));
  }, 60_000);
  afterAll(() => Promise.all(servers.map((s) => s.cleanup())));

  const login = (server: ServerProcess, username: string) =>
    fetch(`${server.baseUrl}/api/auth/bearer/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username, password: 'not-the-password' }).toString(),
    });

  it('when failures for one username alternate between instances past the threshold, then one alert is raised in all, and both slow the next attempt', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const username = `target-${randomBytes(4).toString('hex')}`;
    const statuses: number[] = [];
    for (const server of [a, b, a, b]) statuses.push((await login(server, username)).status);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const timings: number[] = [];
    for (const server of [a, b]) {
      const started = Date.now();
      statuses.push((await login(server, username)).status);
      timings.push(Date.now() - started);
    }
    const warnings = [a, b].map((server) => server.output().split('many failed logins for one username').length - 1);

    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
    expect(warnings[0]! + warnings[1]!).toBe(1);
    expect(Math.min(...timings)).toBeGreaterThanOrEqual(950);
  });
});
