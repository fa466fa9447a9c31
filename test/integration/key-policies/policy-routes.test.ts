import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, tokenForRole } from '../../helpers/factories';
import { KEYS, createKeyWithPolicy, getPolicy, nowSeconds, policyPath, putPolicy } from './support';

const DEFAULTS = {
  expires_at: null,
  enabled: true,
  allowed_addresses: [],
  permissions: [],
  rate_limit: null,
  credits: null,
  max_idle_days: null,
  last_used: null,
  disabled_reason: null,
};

/** Contract, "Key policies": the routes, create with a policy, every field's bounds, the role table, the audit events. */
describe('key policies: GET and PUT /api/v1/api-keys/{appname}/policy', () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  it('when a key was created without a policy, then its policy is every default, with its creation time', async () => {
    const before = nowSeconds();
    const key = await createApiKey(t);

    const res = await t.http().get(policyPath(key.appname)).set(bearer(admin));

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { code: 200, count: 1 }, data: { ...DEFAULTS, created_at: expect.any(Number) } });
    expect(res.body.data.created_at).toBeGreaterThanOrEqual(before - 1);
    expect(res.body.data.created_at).toBeLessThanOrEqual(nowSeconds());
  });

  it('when a PUT gives every field, then GET returns them as given (addresses in their order), and an omitted field takes its default', async () => {
    const key = await createApiKey(t);
    const policy = {
      expires_at: nowSeconds() + 3600,
      enabled: true,
      allowed_addresses: ['2001:db8::/32', '203.0.113.7', '10.0.0.0/8'],
      permissions: ['billing:read', 'reports.v2:export'],
      rate_limit: { limit: 100, window_seconds: 60 },
      credits: { remaining: 1000, refill: { amount: 1000, interval: 'month' } },
      max_idle_days: 90,
    };

    const put = await putPolicy(t, key.appname, policy);
    const replaced = await putPolicy(t, key.appname, { permissions: ['billing:read'] });

    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({ ...DEFAULTS, ...policy, created_at: expect.any(Number) });
    expect(replaced.body.data).toEqual({ ...DEFAULTS, permissions: ['billing:read'], created_at: expect.any(Number) });
    expect(await getPolicy(t, key.appname)).toEqual(replaced.body.data);
  });

  it('when a key is created with a policy, then the policy holds from the start and the create event records it', async () => {
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read'], credits: { remaining: 5 } });

    expect(await getPolicy(t, key.appname)).toMatchObject({ permissions: ['billing:read'], credits: { remaining: 5, refill: null } });
    const { rows } = await t.db.query<{ details: Record<string, unknown> }>("SELECT details FROM audit_events WHERE type = 'api_key.created' AND appname = $1", [
      key.appname,
    ]);
    expect(rows[0]!.details).toMatchObject({ role: 'viewer', policy: { permissions: ['billing:read'], credits: { remaining: 5, refill: null } } });
  });

  it('when a key is regenerated, then it keeps its policy', async () => {
    const key = await createKeyWithPolicy(t, { permissions: ['billing:read'], max_idle_days: 30 });

    const regen = await t.http().put(`${KEYS}/${key.appname}/regen`).set(bearer(admin)).send({ roles: ['viewer'] });

    expect(regen.status).toBe(200);
    expect(await getPolicy(t, key.appname)).toMatchObject({ permissions: ['billing:read'], max_idle_days: 30 });
  });

  describe('bounds: each refused with a 400 naming the field, and nothing changed', () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['expires_at in the past', { expires_at: 1 }, /body\.expires_at: must be in the future/],
      ['expires_at now', { expires_at: 'now' }, /body\.expires_at/],
      ['expires_at not a whole number', { expires_at: 1.5 }, /body\.expires_at/],
      ['expires_at beyond the year 9999', { expires_at: 253_402_300_800 }, /body\.expires_at/],
      ['enabled not a boolean', { enabled: 'yes' }, /body\.enabled: must be true or false/],
      ['an address malformed', { allowed_addresses: ['10.0.0.256'] }, /body\.allowed_addresses\.0: "10\.0\.0\.256" must be an IPv4 or IPv6 address/],
      ['an IPv4 address in octal', { allowed_addresses: ['010.0.0.1'] }, /body\.allowed_addresses\.0/],
      ['a range with host bits set', { allowed_addresses: ['203.0.113.7', '10.0.0.1/8'] }, /body\.allowed_addresses\.1: "10\.0\.0\.1\/8" has host bits set/],
      ['an IPv6 range with host bits set', { allowed_addresses: ['2001:db8::1/32'] }, /body\.allowed_addresses\.0: .*host bits/],
      ['a prefix too long', { allowed_addresses: ['10.0.0.0/33'] }, /body\.allowed_addresses\.0: .*prefix length from 0 to 32/],
      ['an address with a zone', { allowed_addresses: ['fe80::1%eth0'] }, /body\.allowed_addresses\.0/],
      ['101 addresses', { allowed_addresses: Array.from({ length: 101 }, (_, i) => `10.0.${Math.floor(i / 256)}.${i % 256}`) }, /body\.allowed_addresses: must hold at most 100/],
      ['a permission with capitals', { permissions: ['Billing:read'] }, /body\.permissions\.0: must be 1 to 64 characters/],
      ['a permission of 65 characters', { permissions: ['a'.repeat(65)] }, /body\.permissions\.0/],
      ['openid as a permission', { permissions: ['openid'] }, /body\.permissions\.0: openid and the api-keys: scopes come from the role/],
      ['an api-keys: scope as a permission', { permissions: ['api-keys:admin'] }, /body\.permissions\.0/],
      ['a permission twice', { permissions: ['a', 'a'] }, /body\.permissions: must not name a permission twice/],
      ['51 permissions', { permissions: Array.from({ length: 51 }, (_, i) => `p${i}`) }, /body\.permissions: must hold at most 50/],
      ['a rate limit of 0', { rate_limit: { limit: 0, window_seconds: 60 } }, /body\.rate_limit\.limit: must be a whole number from 1 to 1000000/],
      ['a rate limit over a million', { rate_limit: { limit: 1_000_001, window_seconds: 60 } }, /body\.rate_limit\.limit/],
      ['a window of 0', { rate_limit: { limit: 1, window_seconds: 0 } }, /body\.rate_limit\.window_seconds: must be a whole number from 1 to 86400/],
      ['a window over a day', { rate_limit: { limit: 1, window_seconds: 86_401 } }, /body\.rate_limit\.window_seconds/],
      ['a rate limit without its window', { rate_limit: { limit: 1 } }, /body\.rate_limit\.window_seconds: is required/],
      ['a rate limit with an unknown field', { rate_limit: { limit: 1, window_seconds: 1, burst: 2 } }, /body\.rate_limit: unknown field "burst"/],
      ['negative credits', { credits: { remaining: -1 } }, /body\.credits\.remaining: must be a whole number from 0 to 1000000000000/],
      ['credits over 10^12', { credits: { remaining: 1_000_000_000_001 } }, /body\.credits\.remaining/],
      ['a refill of 0', { credits: { remaining: 1, refill: { amount: 0, interval: 'day' } } }, /body\.credits\.refill\.amount/],
      ['a refill every week', { credits: { remaining: 1, refill: { amount: 1, interval: 'week' } } }, /body\.credits\.refill\.interval: must be one of day, month/],
      ['credits with an unknown field', { credits: { remaining: 1, cost: 2 } }, /body\.credits: unknown field "cost"/],
      ['max_idle_days 0', { max_idle_days: 0 }, /body\.max_idle_days: must be a whole number from 1 to 3650/],
      ['max_idle_days 3651', { max_idle_days: 3651 }, /body\.max_idle_days/],
      ['an unknown field', { expires: 1 }, /body: unknown field "expires"/],
    ];

    it.each(cases)('when a PUT gives %s, then 400', async (_name, body, message) => {
      const key = await createApiKey(t);
      const before = await getPolicy(t, key.appname);

      const res = await putPolicy(t, key.appname, body);

      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(message);
      expect(await getPolicy(t, key.appname)).toEqual(before);
    });

    it('when a create gives a bad policy, then 400 naming body.policy.<field>, and no key is created', async () => {
      const appname = `bad-policy-${nowSeconds()}`;

      const res = await t.http().post(KEYS).set(bearer(admin)).send({ appname, roles: [], policy: { rate_limit: { limit: 0, window_seconds: 1 } } });
      const get = await t.http().get(`${KEYS}/${appname}`).set(bearer(admin));

      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^body\.policy\.rate_limit\.limit: /);
      expect(get.status).toBe(404);
    });

    it('when a create gives a read-only field in its policy, then 400 naming it', async () => {
      const res = await t.http().post(KEYS).set(bearer(admin)).send({ appname: `ro-${nowSeconds()}`, roles: [], policy: { created_at: 1 } });

      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/body\.policy: unknown field "created_at"/);
    });

    it('when the largest values of every bound are given, then they are stored', async () => {
      const key = await createApiKey(t);
      const policy = {
        allowed_addresses: Array.from({ length: 100 }, (_, i) => `10.0.0.${i}`),
        permissions: Array.from({ length: 50 }, (_, i) => `p${i}:${'x'.repeat(60)}`.slice(0, 64)),
        rate_limit: { limit: 1_000_000, window_seconds: 86_400 },
        credits: { remaining: 1_000_000_000_000, refill: { amount: 1_000_000_000_000, interval: 'day' } },
        max_idle_days: 3650,
      };

      const res = await putPolicy(t, key.appname, policy);

      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject(policy);
    });
  });

  describe('read-only fields', () => {
    it('when a PUT sends them back as stored, then they are accepted; otherwise 400 naming the field', async () => {
      const key = await createApiKey(t);
      const stored = await getPolicy(t, key.appname);

      const same = await putPolicy(t, key.appname, { ...stored, permissions: ['x'] });
      const created = await putPolicy(t, key.appname, { created_at: (stored.created_at as number) - 1 });
      const used = await putPolicy(t, key.appname, { last_used: 5 });
      const reason = await putPolicy(t, key.appname, { disabled_reason: 'idle' });

      expect(same.status).toBe(200);
      expect(same.body.data.permissions).toEqual(['x']);
      for (const [res, field] of [
        [created, 'created_at'],
        [used, 'last_used'],
        [reason, 'disabled_reason'],
      ] as const) {
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(new RegExp(`^body\\.${field}: is read-only`));
      }
    });
  });

  describe('on and off', () => {
    it('when a PUT turns a key off, then disabled_reason is manual and stays so through another PUT; turning it on clears it; each is audited', async () => {
      const key = await createApiKey(t);

      const off = await putPolicy(t, key.appname, { enabled: false });
      const stillOff = await putPolicy(t, key.appname, { enabled: false, permissions: ['a'] });
      const on = await putPolicy(t, key.appname, { enabled: true });

      expect(off.body.data).toMatchObject({ enabled: false, disabled_reason: 'manual' });
      expect(stillOff.body.data).toMatchObject({ enabled: false, disabled_reason: 'manual' });
      expect(on.body.data).toMatchObject({ enabled: true, disabled_reason: null });
      const { rows } = await t.db.query<{ type: string; details: Record<string, unknown> }>(
        "SELECT type, details FROM audit_events WHERE appname = $1 AND type LIKE 'api_key.%' AND type <> 'api_key.created' ORDER BY id",
        [key.appname],
      );
      expect(rows).toEqual([
        { type: 'api_key.disabled', details: { reason: 'manual', sessions_revoked: 0 } },
        { type: 'api_key.policy_changed', details: { changes: { enabled: { before: true, after: false } } } },
        { type: 'api_key.policy_changed', details: { changes: { permissions: { before: [], after: ['a'] } } } },
        { type: 'api_key.enabled', details: { reason: 'manual' } },
        { type: 'api_key.policy_changed', details: { changes: { enabled: { before: false, after: true }, permissions: { before: ['a'], after: [] } } } },
      ]);
    });

    it('when a PUT changes nothing, then nothing is audited', async () => {
      const key = await createKeyWithPolicy(t, { permissions: ['a'] });

      const res = await putPolicy(t, key.appname, { permissions: ['a'] });

      expect(res.status).toBe(200);
      const { rows } = await t.db.query("SELECT 1 FROM audit_events WHERE appname = $1 AND type = 'api_key.policy_changed'", [key.appname]);
      expect(rows).toHaveLength(0);
    });
  });

  describe('the role table', () => {
    it.each([
      ['viewer', 'viewer', 200, 403],
      ['editor', 'viewer', 200, 200],
      ['editor', 'editor', 200, 200],
      ['editor', null, 200, 200],
      ['editor', 'admin', 200, 403],
      ['admin', 'admin', 200, 200],
      [null, 'viewer', 403, 403],
    ] as const)('when a %s reads and replaces the policy of a key whose role is %s, then GET %i and PUT %i', async (caller, target, getStatus, putStatus) => {
      const key = await createApiKey(t, { role: target });
      const token = await tokenForRole(t, caller);

      const get = await t.http().get(policyPath(key.appname)).set(bearer(token));
      const put = await putPolicy(t, key.appname, { permissions: ['a'] }, token);

      expect(get.status).toBe(getStatus);
      expect(put.status).toBe(putStatus);
      expect((await getPolicy(t, key.appname)).permissions).toEqual(putStatus === 200 ? ['a'] : []);
    });

    it('when the key does not exist, then 404; without a token 401 before a bad body; a bad body 400 before the role', async () => {
      const viewer = await tokenForRole(t, 'viewer');

      const missing = await t.http().get(policyPath('no-such-key')).set(bearer(admin));
      const missingPut = await putPolicy(t, 'no-such-key', {});
      const anonymous = await t.http().put(policyPath('no-such-key')).send({ enabled: 'x' });
      const badBody = await putPolicy(t, 'no-such-key', { enabled: 'x' }, viewer);

      expect(missing.status).toBe(404);
      expect(missingPut.status).toBe(404);
      expect(anonymous.status).toBe(401);
      expect(badBody.status).toBe(400);
    });
  });
});

describe('key policies: KEY_MAX_LIFETIME_DAYS', () => {
  let t: TestApp;
  let admin: string;
  const DAY = 86_400;

  beforeAll(async () => {
    t = await startTestApp({ KEY_MAX_LIFETIME_DAYS: '30' });
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  it('when a key is created without expires_at, then it expires 30 days from now', async () => {
    const key = await createKeyWithPolicy(t, undefined);

    const { expires_at } = await getPolicy(t, key.appname);

    expect(Math.abs((expires_at as number) - (nowSeconds() + 30 * DAY))).toBeLessThanOrEqual(2);
  });

  it('when a create or a PUT asks for longer, or a PUT for none, then 400 naming the field and the ceiling', async () => {
    const key = await createKeyWithPolicy(t, { expires_at: nowSeconds() + DAY });

    const create = await t.http().post(KEYS).set(bearer(admin)).send({ appname: `long-${nowSeconds()}`, roles: [], policy: { expires_at: nowSeconds() + 31 * DAY } });
    const longer = await putPolicy(t, key.appname, { expires_at: nowSeconds() + 31 * DAY });
    const missing = await putPolicy(t, key.appname, {});
    const never = await putPolicy(t, key.appname, { expires_at: null });
    const within = await putPolicy(t, key.appname, { expires_at: nowSeconds() + 29 * DAY });

    expect(create.status).toBe(400);
    expect(create.body.message).toMatch(/^body\.policy\.expires_at: must be at most 30 days from now \(KEY_MAX_LIFETIME_DAYS\)/);
    expect(longer.status).toBe(400);
    expect(longer.body.message).toMatch(/^body\.expires_at: must be at most 30 days/);
    for (const res of [missing, never]) {
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^body\.expires_at: is required while KEY_MAX_LIFETIME_DAYS is set/);
    }
    expect(within.status).toBe(200);
  });

  it('when a caller who may not create the key gives an expiry in the past or beyond the ceiling, then 400 before 403', async () => {
    const viewer = await tokenForRole(t, 'viewer');
    const create = (policy: Record<string, unknown>) => t.http().post(KEYS).set(bearer(viewer)).send({ appname: `v-${nowSeconds()}`, roles: [], policy });

    const past = await create({ expires_at: 1 });
    const tooLate = await create({ expires_at: nowSeconds() + 31 * DAY });
    const valid = await create({ expires_at: nowSeconds() + DAY });

    expect([past.status, past.body.message]).toEqual([400, expect.stringMatching(/^body\.policy\.expires_at: must be in the future/)]);
    expect([tooLate.status, tooLate.body.message]).toEqual([400, expect.stringMatching(/^body\.policy\.expires_at: must be at most 30 days/)]);
    expect(valid.status).toBe(403);
  });

  it('when a PUT gives an expiry in the past, beyond the ceiling or none, then 400 before 403 for a caller who may not update it, and before 404 for a key that does not exist', async () => {
    const key = await createKeyWithPolicy(t, { expires_at: nowSeconds() + DAY });
    const viewer = await tokenForRole(t, 'viewer');

    const past = await putPolicy(t, key.appname, { expires_at: 1 }, viewer);
    const tooLate = await putPolicy(t, key.appname, { expires_at: nowSeconds() + 31 * DAY }, viewer);
    const none = await putPolicy(t, 'no-such-key', {});
    const valid = await putPolicy(t, key.appname, { expires_at: nowSeconds() + DAY }, viewer);

    expect([past.status, tooLate.status, none.status]).toEqual([400, 400, 400]);
    expect(past.body.message).toMatch(/^body\.expires_at: must be in the future/);
    expect(none.body.message).toMatch(/^body\.expires_at: is required while KEY_MAX_LIFETIME_DAYS is set/);
    expect(valid.status).toBe(403);
  });

  it('when a key that existed without an expiry is regenerated, then it keeps having none', async () => {
    const key = await createApiKey(t);
    await t.db.query('UPDATE api_keys SET expires_at = NULL WHERE appname = $1', [key.appname]);

    const regen = await t.http().put(`${KEYS}/${key.appname}/regen`).set(bearer(admin)).send({});

    expect(regen.status).toBe(200);
    expect((await getPolicy(t, key.appname)).expires_at).toBeNull();
  });
});
