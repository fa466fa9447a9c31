import { startTestApp, type TestApp, startTwoInstances, closeInstances } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { bearer, tokenForRole, type TestApiKey } from '../../helpers/factories';
import { Database } from '../../../src/db/database';
import { generateAppkey } from '../../../src/api-keys/appkey';
import { KeyVerifier } from '../../../src/verification/key-verifier';
import { KeyUses } from '../../../src/api-keys/key-use-batches';
import { UNCOUNTED } from '../../../src/usage/usage-counter';
import type { Principal } from '../../../src/shared/principals';
import { IDLE_SLACK_SECONDS } from '../../../src/key-policies/policy';
import { runMaintenance } from '../../../src/maintenance';
import { basic, createKeyWithPolicy, getPolicy, KEYS, nowSeconds, putPolicy } from '../key-policies/support';

/** Contract, "Verifying keys, usage, leaks and imports": POST /api/v1/keys/verify. */
const VERIFY = '/api/v1/keys/verify';

/** A key's checksum character changed: the `ak_` shape, a wrong checksum. */
const withBadChecksum = (appkey: string) => appkey.slice(0, -1) + (appkey.endsWith('A') ? 'B' : 'A');

describe('POST /api/v1/keys/verify', () => {
  let t: TestApp;
  let viewer: string;

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
    viewer = await tokenForRole(t, 'viewer');
  });
  afterAll(async () => {
    await t?.close();
  });

  const verify = (body: Record<string, unknown>, token = viewer) => t.http().post(VERIFY).set(bearer(token)).send(body);
  const code = async (body: Record<string, unknown>) => (await verify(body)).body.code as string;
  const tokenRoute = (key: TestApiKey) => t.http().post('/oauth2/token').type('form').set('Authorization', basic(key.appname, key.appkey)).send({ grant_type: 'client_credentials' });
  const setColumns = (key: TestApiKey, set: string) => t.db.query(`UPDATE api_keys SET ${set} WHERE appname = $1`, [key.appname]);

  it('when the key is good, then VALID with the key, its roles, permissions, expiry, credits, rate limit and last_used', async () => {
    const expiresAt = nowSeconds() + 3600;
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read'], expires_at: expiresAt, rate_limit: { limit: 10, window_seconds: 60 }, credits: { remaining: 5 } }, 'editor');

    const res = await verify({ key: key.appkey });

    const now = nowSeconds();
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      valid: true,
      code: 'VALID',
      appname: key.appname,
      roles: ['editor'],
      permissions: ['billing:read'],
      expires_at: expiresAt,
      credits: { remaining: 4 },
      rate_limit: { limit: 10, remaining: 9, reset: (Math.floor(now / 60) + 1) * 60 },
      last_used: expect.any(Number),
    });
    expect(Math.abs(res.body.last_used - now)).toBeLessThanOrEqual(1);
  });

  it('when no key has that value, then NOT_FOUND holding only valid and code', async () => {
    const res = await verify({ key: generateAppkey() });
    const other = await verify({ key: 'not-an-appkey-at-all' });

    expect(res.body).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(other.body).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('when the key has no policy, then VALID with no credits and no rate limit', async () => {
    const key = await createKeyWithPolicy(t, undefined, null);

    const res = await verify({ key: key.appkey });

    expect(res.body).toMatchObject({ valid: true, code: 'VALID', roles: [], permissions: [], expires_at: null, credits: null, rate_limit: null });
  });

  it('when the key is off, expired, or called from an address its policy does not allow, then DISABLED, EXPIRED, ADDRESS_NOT_ALLOWED', async () => {
    const off = await createKeyWithPolicy(t, { enabled: false });
    const expired = await createKeyWithPolicy(t, {});
    await setColumns(expired, "expires_at = now() - interval '1 second'");
    const fenced = await createKeyWithPolicy(t, { allowed_addresses: ['203.0.113.0/24', '2001:db8::/32'] });

    expect(await code({ key: off.appkey })).toBe('DISABLED');
    expect(await code({ key: expired.appkey })).toBe('EXPIRED');
    expect(await code({ key: fenced.appkey, address: '198.51.100.7' })).toBe('ADDRESS_NOT_ALLOWED');
    expect(await code({ key: fenced.appkey, address: '2001:db9::1' })).toBe('ADDRESS_NOT_ALLOWED');
    expect(await code({ key: fenced.appkey, address: '203.0.113.9' })).toBe('VALID');
    expect(await code({ key: fenced.appkey, address: '::ffff:203.0.113.9' })).toBe('VALID');
    expect(await code({ key: fenced.appkey, address: '2001:db8::5' })).toBe('VALID');
    // Without an address the addresses are not checked (the verifying API did not say who called it).
    expect(await code({ key: fenced.appkey })).toBe('VALID');
  });

  it('when the key has been idle past its rule, then DISABLED, and the verification turns it off as a login would', async () => {
    const key = await createKeyWithPolicy(t, { max_idle_days: 1 });
    await setColumns(key, "max_idle_set_at = now() - interval '2 days', enabled_at = now() - interval '2 days'");

    const res = await verify({ key: key.appkey });
    const policy = await getPolicy(t, key.appname);

    expect(res.body).toMatchObject({ valid: false, code: 'DISABLED' });
    expect(policy).toMatchObject({ enabled: false, disabled_reason: 'idle' });
  });

  it('when the permissions asked for are not all the key’s permissions or its role’s scopes, then INSUFFICIENT_PERMISSIONS; openid counts for every key', async () => {
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read', 'reports'] }, 'viewer');
    const roleless = await createKeyWithPolicy(t, {}, null);

    expect(await code({ key: key.appkey, permissions: ['billing:read', 'reports', 'api-keys:read', 'openid'] })).toBe('VALID');
    expect(await code({ key: key.appkey, permissions: [] })).toBe('VALID');
    expect(await code({ key: key.appkey, permissions: ['billing:write'] })).toBe('INSUFFICIENT_PERMISSIONS');
    expect(await code({ key: key.appkey, permissions: ['billing:read', 'api-keys:write'] })).toBe('INSUFFICIENT_PERMISSIONS');
    expect(await code({ key: roleless.appkey, permissions: ['openid'] })).toBe('VALID');
    expect(await code({ key: roleless.appkey, permissions: ['api-keys:read'] })).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('when several checks refuse, then the first in the contract’s order is the code', async () => {
    const key = await createKeyWithPolicy(t, { enabled: false, allowed_addresses: ['203.0.113.0/24'], rate_limit: { limit: 1, window_seconds: 3600 }, credits: { remaining: 0 } });
    const outside = { key: key.appkey, address: '198.51.100.1', permissions: ['nope'] };

    // Everything refuses: off first.
    await setColumns(key, "expires_at = now() - interval '1 second'");
    expect(await code(outside)).toBe('DISABLED');
    await setColumns(key, 'enabled = true, disabled_reason = NULL');
    expect(await code(outside)).toBe('EXPIRED');
    await setColumns(key, 'expires_at = NULL');
    expect(await code(outside)).toBe('ADDRESS_NOT_ALLOWED');
    expect(await code({ ...outside, address: '203.0.113.1' })).toBe('INSUFFICIENT_PERMISSIONS');
    // The limit of 1 was used up by the first verification: every verification of an existing key counts.
    expect(await code({ key: key.appkey, address: '203.0.113.1' })).toBe('RATE_LIMITED');
    await putPolicy(t, key.appname, { allowed_addresses: ['203.0.113.0/24'], credits: { remaining: 0 } });
    expect(await code({ key: key.appkey, address: '203.0.113.1' })).toBe('USAGE_EXCEEDED');
  });

  it('when a refusal is answered, then it spends no credit and leaves last_used as it was', async () => {
    const key = await createKeyWithPolicy(t, { credits: { remaining: 3 }, permissions: ['a'] });

    const refused = await verify({ key: key.appkey, permissions: ['b'] });

    expect(refused.body).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS', credits: { remaining: 3 }, last_used: null });
    expect((await getPolicy(t, key.appname)).credits).toMatchObject({ remaining: 3 });
  });

  it('when cost is 0, then the credits are checked without spending (and at 0 refused); a cost above what is left is refused and spends nothing; a cost within it spends that many', async () => {
    const key = await createKeyWithPolicy(t, { credits: { remaining: 5 } });

    const free = await verify({ key: key.appkey, cost: 0 });
    const tooDear = await verify({ key: key.appkey, cost: 6 });
    const three = await verify({ key: key.appkey, cost: 3 });
    const thenTooDear = await verify({ key: key.appkey, cost: 3 });
    const last = await verify({ key: key.appkey, cost: 2 });
    const none = await verify({ key: key.appkey });
    // At 0 the key is refused until a refill, even to a check that would spend nothing.
    const freeAtZero = await verify({ key: key.appkey, cost: 0 });

    expect(free.body).toMatchObject({ code: 'VALID', credits: { remaining: 5 } });
    expect(tooDear.body).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: { remaining: 5 } });
    expect(three.body).toMatchObject({ code: 'VALID', credits: { remaining: 2 } });
    expect(thenTooDear.body).toMatchObject({ code: 'USAGE_EXCEEDED', credits: { remaining: 2 } });
    expect(last.body).toMatchObject({ code: 'VALID', credits: { remaining: 0 } });
    expect(none.body).toMatchObject({ code: 'USAGE_EXCEEDED', credits: { remaining: 0 } });
    expect(freeAtZero.body).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: { remaining: 0 } });
    expect((await getPolicy(t, key.appname)).credits).toMatchObject({ remaining: 0 });
  });

  it('when a key is verified and used on the token route, then both count against the one rate limit', async () => {
    const key = await createKeyWithPolicy(t, { rate_limit: { limit: 3, window_seconds: 3600 } });

    expect((await tokenRoute(key)).status).toBe(200);
    const second = await verify({ key: key.appkey });
    expect((await tokenRoute(key)).status).toBe(200);
    const fourth = await verify({ key: key.appkey });
    const fifth = await tokenRoute(key);

    expect(second.body).toMatchObject({ code: 'VALID', rate_limit: { limit: 3, remaining: 1 } });
    expect(fourth.body).toMatchObject({ code: 'RATE_LIMITED', rate_limit: { limit: 3, remaining: 0 } });
    expect(fifth.status).toBe(429);
    expect(fifth.body.error_description ?? fifth.body.message).toMatch(/rate limit/);
  });

  it('when a key with credits is verified, then the same credits as the token route are spent', async () => {
    const key = await createKeyWithPolicy(t, { credits: { remaining: 2 } });

    const verified = await verify({ key: key.appkey });
    const token = await tokenRoute(key);
    const after = await verify({ key: key.appkey });
    const refusedToken = await tokenRoute(key);

    expect(verified.body.credits).toEqual({ remaining: 1 });
    expect(token.status).toBe(200);
    expect(after.body).toMatchObject({ code: 'USAGE_EXCEEDED', credits: { remaining: 0 } });
    expect(refusedToken.status).toBe(401);
  });

  it('when a key without credits is verified, then last_used is answered at once but written with the next batch', async () => {
    const key = await createKeyWithPolicy(t, {});

    const res = await verify({ key: key.appkey });
    const before = await getPolicy(t, key.appname);
    const again = await verify({ key: key.appkey, permissions: ['x'] });
    await t.services.usageRecorder.flush();
    const after = await getPolicy(t, key.appname);

    expect(res.body.last_used).toBeGreaterThan(0);
    expect(before.last_used).toBeNull();
    // A refusal still tells the latest use this instance knows of, written or not.
    expect(again.body.last_used).toBe(res.body.last_used);
    expect(after.last_used).toBe(res.body.last_used);
  });

  it('when a key was regenerated with a grace, then its previous appkey verifies until the grace ends, as on the token routes', async () => {
    const key = await createKeyWithPolicy(t, {});
    const admin = await tokenForRole(t, 'admin');
    const regen = await t.http().put(`${KEYS}/${key.appname}/regen`).query({ grace_seconds: 60 }).set(bearer(admin)).send({ roles: ['viewer'] });

    const previous = await verify({ key: key.appkey });
    const current = await verify({ key: regen.body.data.appkey });
    await t.http().put(`${KEYS}/${key.appname}/regen`).set(bearer(admin)).send({ roles: ['viewer'] });
    const previousAfterGrace = await verify({ key: regen.body.data.appkey });

    expect(previous.body).toMatchObject({ code: 'VALID', appname: key.appname });
    expect(current.body).toMatchObject({ code: 'VALID', appname: key.appname });
    expect(previousAfterGrace.body).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('when the body has an unknown field or a malformed value, then 400 naming it', async () => {
    const key = generateAppkey();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ key, extra: 1 }, /^body: unknown field/],
      [{}, /^body\.key: /],
      [{ key: '' }, /^body\.key: /],
      [{ key: 7 }, /^body\.key: /],
      [{ key, cost: 1001 }, /^body\.cost: /],
      [{ key, cost: -1 }, /^body\.cost: /],
      [{ key, cost: 1.5 }, /^body\.cost: /],
      [{ key, address: '10.0.0.1/8' }, /^body\.address: /],
      [{ key, address: 'localhost' }, /^body\.address: /],
      [{ key, permissions: 'billing:read' }, /^body\.permissions: /],
      [{ key, permissions: ['Billing'] }, /^body\.permissions\.0: /],
    ];

    for (const [body, message] of cases) {
      const res = await verify(body);
      expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(message)]);
    }
  });

  it('when the body is not JSON, then 400 or 415, but only after the bearer check (401 first)', async () => {
    const malformed = () => t.http().post(VERIFY).set('Content-Type', 'application/json').send('{"key": ');

    const anonymous = await malformed();
    const withToken = await malformed().set(bearer(viewer));
    const asForm = await t.http().post(VERIFY).set(bearer(viewer)).type('form').send({ key: generateAppkey() });

    expect(anonymous.status).toBe(401);
    expect(withToken.status).toBe(400);
    expect(asForm.status).toBe(415);
  });

  it('when the token lacks api-keys:read, then 403; without a token, 401', async () => {
    const roleless = await tokenForRole(t, null);
    const key = await createKeyWithPolicy(t, {});

    const forbidden = await verify({ key: key.appkey }, roleless);
    const anonymous = await t.http().post(VERIFY).send({ key: key.appkey });

    expect(forbidden.status).toBe(403);
    expect(anonymous.status).toBe(401);
  });

  it('when another method is used, then 401 without a token and 405 with one', async () => {
    const anonymous = await t.http().get(VERIFY);
    const withToken = await t.http().get(VERIFY).set(bearer(viewer));

    expect(anonymous.status).toBe(401);
    expect([withToken.status, withToken.headers.allow]).toEqual([405, 'POST']);
  });
});

/**
 * A verification of a key without credits writes last_used up to a minute later (UsageRecorder), so
 * the idle rule waits IDLE_SLACK_SECONDS past a key's deadline before it turns the key off.
 */
describe('verification and the idle rule while last_used is not yet written', () => {
  let t: TestApp;
  let viewer: string;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    // No flush during a test: the verification's last_used stays in memory, as it does for up to a minute.
    t = await startTestApp({ USAGE_FLUSH_SECONDS: '300' });
    viewer = await tokenForRole(t, 'viewer');
  });
  afterAll(async () => {
    await t?.close();
  });

  const verify = (key: TestApiKey) => t.http().post(VERIFY).set(bearer(viewer)).send({ key: key.appkey });
  const maintenance = () => runMaintenance(t.db, { intervalSeconds: 60, clockTolerance: 0, webhookRetentionDays: 30 });
  /** A key idle for a day at `secondsPastDeadline` from now (negative: before): every anchor one day and that many seconds ago. */
  async function keyIdle(secondsPastDeadline: number): Promise<TestApiKey> {
    const key = await createKeyWithPolicy(t, { max_idle_days: 1 });
    await t.db.query(
      `UPDATE api_keys SET last_used = at, max_idle_set_at = at, enabled_at = at
         FROM (SELECT now() - interval '1 day' - make_interval(secs => $2) AS at) AS anchor
        WHERE appname = $1`,
      [key.appname, secondsPastDeadline],
    );
    return key;
  }

  it('when a key verified VALID passes its idle deadline a second later, then it is still VALID and still on', async () => {
    const key = await keyIdle(-1);

    const first = await verify(key);
    await sleep(2000);
    const second = await verify(key);

    expect([first.body.code, second.body.code]).toEqual(['VALID', 'VALID']);
    expect(await getPolicy(t, key.appname)).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('when the maintenance pass runs just after the idle deadline of a key verified before it, then the key stays on', async () => {
    const key = await keyIdle(-1);

    expect((await verify(key)).body.code).toBe('VALID');
    await sleep(2000);
    await maintenance();

    expect(await getPolicy(t, key.appname)).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await verify(key)).body.code).toBe('VALID');
  });

  it('when a key is past its idle deadline by more than the slack, then a verification refuses it as DISABLED and the maintenance pass turns it off, as before', async () => {
    const used = await keyIdle(IDLE_SLACK_SECONDS + 5);
    const unused = await keyIdle(IDLE_SLACK_SECONDS + 5);

    const res = await verify(used);
    await maintenance();

    expect(res.body).toMatchObject({ valid: false, code: 'DISABLED' });
    expect(await getPolicy(t, used.appname)).toMatchObject({ enabled: false, disabled_reason: 'idle' });
    expect(await getPolicy(t, unused.appname)).toMatchObject({ enabled: false, disabled_reason: 'idle' });
  });
});

describe('verification of an ak_ string with a wrong checksum', () => {
  let t: TestApp;
  let closed: Database;
  const principal: Principal = { type: 'user', id: 'u', name: 'reader', role: 'viewer', sessionId: 's', scopes: ['api-keys:read'] };

  beforeAll(async () => {
    t = await startTestApp();
    // A real pool, ended: any query on it fails. Only an answer given without the database succeeds.
    closed = new Database({ url: t.config.databaseUrl! }, t.logger);
    await closed.close();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('when no imported key may exist, then NOT_FOUND without a database read: it answers even with the database unreachable', async () => {
    const key = await createKeyWithPolicy(t, {});
    const verifier = new KeyVerifier(closed, t.services.keyJudge, UNCOUNTED, { mayHoldImportedKeys: () => false }, new KeyUses(closed));

    const answer = await verifier.verify(principal, { key: withBadChecksum(key.appkey), cost: 1 });
    const overHttp = await t.http().post(VERIFY).set(bearer(await tokenForRole(t, 'viewer'))).send({ key: withBadChecksum(key.appkey) });

    expect(answer).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(overHttp.body).toEqual({ valid: false, code: 'NOT_FOUND' });
    // The control: a well-formed key does need the database.
    await expect(verifier.verify(principal, { key: key.appkey, cost: 1 })).rejects.toThrow();
  });

  it('when an imported key may exist, then the same string is looked up like any other', async () => {
    const key = await createKeyWithPolicy(t, {});
    const verifier = new KeyVerifier(closed, t.services.keyJudge, UNCOUNTED, { mayHoldImportedKeys: () => true }, new KeyUses(closed));

    await expect(verifier.verify(principal, { key: withBadChecksum(key.appkey), cost: 1 })).rejects.toThrow();
  });
});

onSharedServerOnly()('verification across two instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await startTwoInstances();
  });
  afterAll(() => closeInstances(a, b));

  it('when 20 verifications of a key with 7 credits race on two instances, then exactly 7 are VALID and the credits end at 0', async () => {
    const key = await createKeyWithPolicy(a, { credits: { remaining: 7 } });
    const token = await tokenForRole(a, 'viewer');

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).http().post(VERIFY).set(bearer(token)).send({ key: key.appkey })));

    const codes = answers.map((res) => res.body.code as string);
    expect(codes.filter((c) => c === 'VALID')).toHaveLength(7);
    expect(codes.filter((c) => c === 'USAGE_EXCEEDED')).toHaveLength(13);
    expect((await getPolicy(a, key.appname)).credits).toMatchObject({ remaining: 0 });
    const remainders = answers.filter((res) => res.body.code === 'VALID').map((res) => res.body.credits.remaining as number);
    expect(remainders.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('when a key is turned off on one instance, then the other answers DISABLED at once', async () => {
    const key = await createKeyWithPolicy(a, {});
    const token = await tokenForRole(a, 'viewer');
    expect((await b.http().post(VERIFY).set(bearer(token)).send({ key: key.appkey })).body.code).toBe('VALID');

    await putPolicy(a, key.appname, { enabled: false });
    const res = await b.http().post(VERIFY).set(bearer(token)).send({ key: key.appkey });

    expect(res.body.code).toBe('DISABLED');
  });
});
