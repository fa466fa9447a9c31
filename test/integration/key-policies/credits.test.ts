import { startTestApp, type TestApp, startTwoInstances, closeInstances } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { signRequestToken } from '../../helpers/tokens';
import { basic, createKeyWithPolicy, getPolicy, JWT_BEARER, keyRow } from './support';

const exchange = (t: TestApp, key: { appname: string; appkey: string }) => t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) });
const introspectAs = (t: TestApp, key: { appname: string; appkey: string }) =>
  t.http().post('/oauth2/introspect').type('form').set('Authorization', basic(key.appname, key.appkey)).send({ token: 'x' });
const clientCredentials = (t: TestApp, key: { appname: string; appkey: string }) =>
  t.http().post('/oauth2/token').type('form').send({ grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey });

/** Contract, "Key policies": credits are exact across instances and concurrent requests. */
onSharedServerOnly()('key policies: credits under concurrency, on two instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await startTwoInstances();
  });
  afterAll(() => closeInstances(a, b));

  it('when 50 uses of a key with 20 credits arrive at once on two instances, by three paths, then exactly 20 succeed and none goes below 0', async () => {
    const key = await createKeyWithPolicy(a, { credits: { remaining: 22 } });
    // Both instances keep the key (appkeys and policy) before the burst, as a busy deployment would.
    expect((await exchange(a, key)).status).toBe(200);
    expect((await exchange(b, key)).status).toBe(200);

    const uses = Array.from({ length: 50 }, (_, i) => {
      const t = i % 2 === 0 ? a : b;
      return [exchange, introspectAs, clientCredentials][i % 3]!(t, key);
    });
    const statuses = (await Promise.all(uses)).map((res) => res.status);

    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 401)).toBe(true);
    expect(Number((await keyRow(a, key.appname))!.credits_remaining)).toBe(0);
    const { rows } = await a.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE type = 'token.refused' AND appname = $1", [key.appname]);
    expect(rows[0]!.n).toBe(30);
  });

  it('when a key has credits and no policy change, then uses on the other instance spend from the same count', async () => {
    const key = await createKeyWithPolicy(a, { credits: { remaining: 2 } });

    const first = await exchange(a, key);
    const second = await exchange(b, key);
    const third = await exchange(a, key);

    expect([first.status, second.status, third.status]).toEqual([200, 200, 401]);
    expect(third.body.message).toBe('API key usage limit reached');
  });
});

/** Contract, "Key policies": refills at 00:00 UTC each day or on the 1st of each month, computed at next use. */
describe('key policies: credits refill across a day and a month (the policies\' clock moved)', () => {
  let t: TestApp;
  let at = 0;

  beforeAll(async () => {
    t = await startTestApp({}, { clock: () => at });
  });
  afterAll(() => t.close());

  const utc = (y: number, m: number, d: number, hh = 0, mm = 0, ss = 0) => Date.UTC(y, m, d, hh, mm, ss) / 1000;

  it('when a key\'s daily credits are spent, then it is refused until 00:00 UTC, and from then it has its amount again, once', async () => {
    at = utc(2031, 4, 14, 12);
    const key = await createKeyWithPolicy(t, { credits: { remaining: 1, refill: { amount: 2, interval: 'day' } } });

    const spent = await exchange(t, key);
    at = utc(2031, 4, 14, 23, 59, 59);
    const beforeMidnight = await exchange(t, key);
    at = utc(2031, 4, 15);
    const shown = await getPolicy(t, key.appname);
    const afterMidnight = [await exchange(t, key), await exchange(t, key), await exchange(t, key)];

    expect(spent.status).toBe(200);
    expect(beforeMidnight.status).toBe(429);
    expect(beforeMidnight.headers['retry-after']).toBe('1');
    expect(shown.credits).toEqual({ remaining: 2, refill: { amount: 2, interval: 'day' } });
    expect(afterMidnight.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(afterMidnight[2]!.headers['retry-after']).toBe('86400');
  });

  it('when a key\'s monthly credits are spent, then they come back on the 1st at 00:00 UTC, not at a day\'s end', async () => {
    at = utc(2031, 0, 30, 8);
    const key = await createKeyWithPolicy(t, { credits: { remaining: 1, refill: { amount: 1, interval: 'month' } } });

    const spent = await exchange(t, key);
    at = utc(2031, 0, 31, 0, 0, 1);
    const nextDay = await exchange(t, key);
    at = utc(2031, 0, 31, 23, 59, 59);
    const lastSecond = await exchange(t, key);
    at = utc(2031, 1, 1);
    const firstOfMonth = await exchange(t, key);

    expect(spent.status).toBe(200);
    expect(nextDay.status).toBe(429);
    expect(Number(nextDay.headers['retry-after'])).toBe(utc(2031, 1, 1) - utc(2031, 0, 31, 0, 0, 1));
    expect(lastSecond.status).toBe(429);
    expect(firstOfMonth.status).toBe(200);
  });

  it('when days pass without use, then the refill sets the credits to the amount, it does not add them up', async () => {
    at = utc(2031, 5, 1, 10);
    const key = await createKeyWithPolicy(t, { credits: { remaining: 0, refill: { amount: 3, interval: 'day' } } });

    at = utc(2031, 5, 9, 10);

    expect((await getPolicy(t, key.appname)).credits).toEqual({ remaining: 3, refill: { amount: 3, interval: 'day' } });
  });
});

/** Review finding: a request authenticates its key once, however many of its parts name that key. */
describe('key policies: a jwt-bearer grant by the key as its own client costs one credit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const jwtBearer = (key: { appname: string; appkey: string }, secret: string) =>
    t
      .http()
      .post('/oauth2/token')
      .type('form')
      .set('Authorization', basic(key.appname, secret))
      .send({ grant_type: JWT_BEARER, assertion: signRequestToken(key.appname, key.appkey) });

  it('when the key signs the assertion and authenticates as the client, then one credit and one count of its rate limit are spent; a wrong secret beside it is invalid_client and spends nothing', async () => {
    const key = await createKeyWithPolicy(t, { credits: { remaining: 3 }, rate_limit: { limit: 2, window_seconds: 3600 } });

    const first = await jwtBearer(key, key.appkey);
    const wrong = await jwtBearer(key, `${key.appkey}x`);
    const second = await jwtBearer(key, key.appkey);

    expect([first.status, wrong.status, second.status]).toEqual([200, 401, 200]);
    expect(wrong.body.error).toBe('invalid_client');
    expect((await getPolicy(t, key.appname)).credits).toEqual({ remaining: 1, refill: null });
  });
});
