import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createUser, tokenForRole } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Windows are 5 s: long enough that a slow machine cannot roll one over mid-test, short enough to wait out.

function expectTooManyRequests(res: Response): void {
  expectError(res, 429, 'TooManyRequests');
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
}

describe('token routes: per client address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_TOKEN_REQUESTS: '4', RATE_LIMIT_TOKEN_WINDOW: '5' });
  });
  afterAll(() => t.close());

  it('when the budget is spent across the three token routes, then 429 with RateLimit headers, and it resets after the window', async () => {
    const garbage = (path: string) => t.http().post(path).type('form').send({ refresh_token: 'x', jwt: 'x' });

    const first = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: 'not-a-token' });
    await t.http().post('/api/v1/auth/token').send({ jwt: 'not-a-token' });
    await t.http().post('/api/auth/bearer/token').type('form').send({ username: 'nobody', password: 'wrong-password' });
    const fourth = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: 'not-a-token' });
    const fifth = await garbage('/api/v1/auth/token');

    expect(first.status).toBe(401);
    expect(first.headers['ratelimit']).toMatch(/^"token-routes"; r=3; t=\d+$/);
    expect(first.headers['ratelimit-policy']).toMatch(/^"token-routes"; q=4; w=5; pk=:[^:]+:$/);
    expect(fourth.status).toBe(401);
    expectTooManyRequests(fifth);

    await sleep(5_100);
    expect((await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: 'x' })).status).toBe(401);
  });
});

describe('failed password logins: per username and per client address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PASSWORD_FAILURES: '3',
      RATE_LIMIT_PASSWORD_WINDOW: '5',
      // Lets each request claim its own client address through X-Forwarded-For.
      TRUST_PROXY: 'loopback',
    });
  });
  afterAll(() => t.close());

  const login = (from: string, username: string, password: string) =>
    t.http().post('/api/auth/bearer/token').set('X-Forwarded-For', from).type('form').send({ username, password });

  it('when one username fails from many addresses, then it is locked, even with the right password, until the window ends', async () => {
    const user = await createUser(t, { role: 'viewer' });
    for (const from of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) expect((await login(from, user.username, 'wrong-password')).status).toBe(401);

    expectTooManyRequests(await login('10.0.0.4', user.username, user.password));
    expect((await login('10.0.0.4', (await createUser(t)).username, 'wrong-password')).status).toBe(401);

    await sleep(5_100);
    expect((await login('10.0.0.5', user.username, user.password)).status).toBe(200);
  });

  it('when one address fails for many usernames, then that address is refused and others are not', async () => {
    const user = await createUser(t, { role: 'viewer' });
    for (const name of ['a-user', 'b-user', 'c-user']) expect((await login('10.1.0.1', name, 'wrong-password')).status).toBe(401);

    expectTooManyRequests(await login('10.1.0.1', user.username, user.password));
    expect((await login('10.1.0.2', user.username, user.password)).status).toBe(200);
  });

  it('when logins succeed, then they use none of the failed-attempt budget', async () => {
    const user = await createUser(t, { role: 'viewer' });
    for (let i = 0; i < 5; i++) expect((await login('10.2.0.1', user.username, user.password)).status).toBe(200);

    for (let i = 0; i < 3; i++) expect((await login('10.2.0.1', user.username, 'wrong-password')).status).toBe(401);
    expectTooManyRequests(await login('10.2.0.1', user.username, 'wrong-password'));
  });
});

describe('key operations: per principal', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_KEY_REQUESTS: '3', RATE_LIMIT_KEY_WINDOW: '5' });
  });
  afterAll(() => t.close());

  it('when one principal spends its budget, then it gets 429 while another principal is still served, until the window ends', async () => {
    const [busy, other] = [await tokenForRole(t, 'viewer'), await tokenForRole(t, 'viewer')];
    for (let i = 0; i < 3; i++) expect((await t.http().get('/api/v1/api-keys').set(bearer(busy))).status).toBe(200);

    const refused = await t.http().get('/api/v1/api-keys').set(bearer(busy));
    const served = await t.http().get('/api/v1/api-keys').set(bearer(other));

    expectTooManyRequests(refused);
    expect(refused.headers['ratelimit']).toMatch(/^"key-operations"; r=0; t=\d+$/);
    expect(served.status).toBe(200);
    await sleep(5_100);
    expect((await t.http().get('/api/v1/api-keys').set(bearer(busy))).status).toBe(200);
  });

  it('when no token is sent, then 401 comes first and no budget is used', async () => {
    const res = await t.http().get('/api/v1/api-keys');

    expect(res.status).toBe(401);
    expect(res.headers['ratelimit']).toBeUndefined();
  });
});

describe('RATE_LIMIT_ENABLED=false', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_ENABLED: 'false', RATE_LIMIT_TOKEN_REQUESTS: '1' });
  });
  afterAll(() => t.close());

  it('when limits are off, then no request is refused and no RateLimit header is sent', async () => {
    const responses = [];
    for (let i = 0; i < 3; i++) responses.push(await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: 'x' }));

    expect(responses.map((r) => r.status)).toEqual([401, 401, 401]);
    expect(responses[2]!.headers['ratelimit']).toBeUndefined();
  });
});
