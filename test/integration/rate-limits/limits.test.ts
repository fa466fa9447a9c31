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

describe('failed password logins: per username and address, and per address, never per username alone', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PASSWORD_FAILURES: '3',
      RATE_LIMIT_PASSWORD_ADDRESS_FAILURES: '5',
      RATE_LIMIT_PASSWORD_WINDOW: '5',
      // Far off: this describe is about refusals; the account alert has its own.
      LOGIN_ACCOUNT_ALERT: '1000',
      // Lets each request claim its own client address through X-Forwarded-For.
      TRUST_PROXY: 'loopback',
    });
  });
  afterAll(() => t.close());

  const login = (from: string, username: string, password: string) =>
    t.http().post('/api/auth/bearer/token').set('X-Forwarded-For', from).type('form').send({ username, password });
  const passwordGrant = (from: string, username: string, password: string) =>
    t.http().post('/oauth2/token').set('X-Forwarded-For', from).type('form').send({ grant_type: 'password', username, password });

  it('when strangers fail for one username from many addresses, then its owner still logs in from an address that has not failed', async () => {
    const user = await createUser(t, { role: 'admin' });
    for (const from of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']) {
      for (let i = 0; i < 3; i++) expect((await login(from, user.username, 'wrong-password')).status).toBe(401);
    }

    expect((await login('10.0.0.9', user.username, user.password)).status).toBe(200);
    expect((await passwordGrant('10.0.0.10', user.username, user.password)).status).toBe(200);
  });

  it('when one address fails for one username, then that pair is refused, even with the right password, and neither the user elsewhere nor other users there are', async () => {
    const [user, neighbour] = [await createUser(t, { role: 'viewer' }), await createUser(t, { role: 'viewer' })];
    for (let i = 0; i < 3; i++) expect((await login('10.3.0.1', user.username, 'wrong-password')).status).toBe(401);

    expectTooManyRequests(await login('10.3.0.1', user.username, user.password));
    expect((await login('10.3.0.2', user.username, user.password)).status).toBe(200);
    expect((await login('10.3.0.1', neighbour.username, neighbour.password)).status).toBe(200);

    await sleep(5_100);
    expect((await login('10.3.0.1', user.username, user.password)).status).toBe(200);
  });

  it('when the OAuth password grant fails, then it counts against the same pair as the own route', async () => {
    const user = await createUser(t, { role: 'viewer' });
    for (let i = 0; i < 2; i++) expect((await passwordGrant('10.4.0.1', user.username, 'wrong-password')).status).toBe(400);
    expect((await login('10.4.0.1', user.username, 'wrong-password')).status).toBe(401);

    expectTooManyRequests(await login('10.4.0.1', user.username, user.password));
    expectTooManyRequests(await passwordGrant('10.4.0.1', user.username, user.password));
  });

  it('when one address fails for many usernames, then that address is refused and others are not', async () => {
    const user = await createUser(t, { role: 'viewer' });
    for (const name of ['a-user', 'b-user', 'c-user', 'd-user', 'e-user']) expect((await login('10.1.0.1', name, 'wrong-password')).status).toBe(401);

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

describe('LOGIN_ACCOUNT_ALERT: one username failing from everywhere is slowed and reported, never refused', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PASSWORD_FAILURES: '10',
      RATE_LIMIT_PASSWORD_ADDRESS_FAILURES: '10',
      RATE_LIMIT_PASSWORD_WINDOW: '30',
      LOGIN_ACCOUNT_ALERT: '3',
      TRUST_PROXY: 'loopback',
    });
  });
  afterAll(() => t.close());

  const login = (from: string, username: string, password: string) =>
    t.http().post('/api/auth/bearer/token').set('X-Forwarded-For', from).type('form').send({ username, password });
  const throttledEvents = (username: string) =>
    t.db.query<{ client_address: string; details: { failures: number; window_seconds: number } }>(
      "SELECT client_address, details FROM audit_events WHERE type = 'login.throttled' AND username = $1",
      [username],
    );
  /** The event is written once the refused answer has gone out: waits for it a little. */
  async function eventuallyThrottled(username: string) {
    for (let i = 0; i < 50; i++) {
      const { rows } = await throttledEvents(username);
      if (rows.length > 0) return rows;
      await sleep(20);
    }
    return [];
  }
  async function timed<T>(request: () => Promise<T>): Promise<{ res: T; ms: number }> {
    const started = Date.now();
    const res = await request();
    return { res, ms: Date.now() - started };
  }

  it('when one username passes the threshold from many addresses and both password routes, then login.throttled is recorded once, a warning logged, and every further attempt waits a second but the right password still gets in', async () => {
    const user = await createUser(t, { role: 'admin' });
    const passwordGrant = (from: string) =>
      t.http().post('/oauth2/token').set('X-Forwarded-For', from).type('form').send({ grant_type: 'password', username: user.username, password: 'wrong-password' });
    for (const from of ['10.5.0.1', '10.5.0.2']) expect((await login(from, user.username, 'wrong-password')).status).toBe(401);
    expect((await passwordGrant('10.5.0.3')).status).toBe(400);
    expect((await login('10.5.0.4', user.username, 'wrong-password')).status).toBe(401);

    const rows = await eventuallyThrottled(user.username);
    const right = await timed(() => login('10.5.0.9', user.username, user.password));
    const wrong = await timed(() => login('10.5.0.5', user.username, 'wrong-password'));
    await sleep(200);
    const after = await throttledEvents(user.username);

    expect(rows).toEqual([{ client_address: '10.5.0.4', details: expect.objectContaining({ failures: 4, window_seconds: 30 }) }]);
    expect(t.logs()).toContain('many failed logins for one username');
    expect(right.res.status).toBe(200);
    expect(right.ms).toBeGreaterThanOrEqual(950);
    expect(wrong.res.status).toBe(401);
    expect(wrong.ms).toBeGreaterThanOrEqual(950);
    expect(after.rows).toHaveLength(1);
  });

  it('when a username stays at the threshold, then nothing is slowed or reported', async () => {
    const user = await createUser(t, { role: 'viewer' });
    for (const from of ['10.6.0.1', '10.6.0.2', '10.6.0.3']) expect((await login(from, user.username, 'wrong-password')).status).toBe(401);

    const right = await timed(() => login('10.6.0.9', user.username, user.password));
    await sleep(200);

    expect(right.res.status).toBe(200);
    expect(right.ms).toBeLessThan(900);
    expect((await throttledEvents(user.username)).rows).toEqual([]);
  });
});

describe('bearer routes: refused tokens per client address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_BEARER_FAILURES: '3',
      RATE_LIMIT_BEARER_WINDOW: '5',
      TRUST_PROXY: 'loopback',
    });
  });
  afterAll(() => t.close());

  const list = (from: string, token: string) => t.http().get('/api/v1/api-keys').set('X-Forwarded-For', from).set(bearer(token));

  it('when valid tokens are used more often than the limit, then none is refused for it', async () => {
    const token = await tokenForRole(t, 'viewer');

    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await list('10.7.0.1', token)).status);

    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('when one address sends refused tokens past the limit, then its bearer requests get 429 with Retry-After, valid or not, while another address is served, until the window ends', async () => {
    const token = await tokenForRole(t, 'viewer');
    for (let i = 0; i < 3; i++) expect((await list('10.8.0.1', `${token}x`)).status).toBe(401);

    const refused = await list('10.8.0.1', 'not-a-token');
    const validRefused = await t.http().get('/api/v1/audit-events').set('X-Forwarded-For', '10.8.0.1').set(bearer(token));
    const elsewhere = await list('10.8.0.2', token);

    expectTooManyRequests(refused);
    expectTooManyRequests(validRefused);
    expect(elsewhere.status).toBe(200);
    await sleep(5_100);
    expect((await list('10.8.0.1', token)).status).toBe(200);
  });

  it('when the refused tokens come to the introspection endpoints, then they count against the same budget', async () => {
    const token = await tokenForRole(t, 'admin');
    const introspect = (path: string) => t.http().post(path).set('X-Forwarded-For', '10.9.0.1').set(bearer(`${token}x`)).type('form').send({ token });

    expect((await introspect('/oauth2/introspect')).status).toBe(401);
    expect((await introspect('/api/auth/bearer/introspect')).status).toBe(401);
    expect((await introspect('/oauth2/introspect')).status).toBe(401);

    expectTooManyRequests(await list('10.9.0.1', token));
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
