import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey, tokenForRole } from '../../helpers/factories';
import { generateAppkey } from '../../../src/api-keys/appkey';
import { signRequestToken } from '../../helpers/tokens';
import { getPolicy, KEYS } from '../key-policies/support';

const REVOKE = '/api/v1/keys/revoke';

/** Contract, "Verifying keys, usage, leaks and imports": self-revocation. */
describe('POST /api/v1/keys/revoke: whoever holds a key turns it off', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const introspect = async (token: string) =>
    t.http().post('/oauth2/introspect').type('form').set(bearer(await tokenForRole(t, 'admin'))).send({ token });

  it('when a holder presents a live key, then it is disabled as holder, its tokens die at once, and api_key.disabled says holder', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const tokens = await loginWithApiKey(t, key);
    expect((await t.http().get(KEYS).set(bearer(tokens.access_token))).status).toBe(200);

    const res = await t.http().post(REVOKE).send({ key: key.appkey });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await t.http().get(KEYS).set(bearer(tokens.access_token))).status).toBe(401);
    expect((await introspect(tokens.access_token)).body).toEqual({ active: false });
    expect((await t.http().post('/api/auth/bearer/refresh').send({ refresh_token: tokens.refresh_token })).status).toBe(401);
    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: false, disabled_reason: 'holder' }));
    const { rows } = await t.db.query<{ actor: string; details: Record<string, unknown> }>(
      "SELECT actor, details FROM audit_events WHERE type = 'api_key.disabled' AND appname = $1",
      [key.appname],
    );
    expect(rows).toEqual([{ actor: `api_key:${key.appname}`, details: expect.objectContaining({ reason: 'holder', sessions_revoked: 1 }) }]);
    const refused = await t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toBe('API key disabled');
  });

  it('when the string is no key of ours, or the key is already off, then the answer is the same and nothing is recorded', async () => {
    const key = await createApiKey(t);
    await t.http().post(REVOKE).send({ key: key.appkey });

    const unknown = await t.http().post(REVOKE).send({ key: generateAppkey() });
    const junk = await t.http().post(REVOKE).type('form').send({ key: 'not a key at all' });
    const again = await t.http().post(REVOKE).send({ key: key.appkey });

    for (const res of [unknown, junk, again]) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
      expect(res.headers['cache-control']).toBe('no-store');
    }
    const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE type = 'api_key.disabled' AND appname = $1", [key.appname]);
    expect(rows[0]!.n).toBe(1);
  });

  it('when the previous key is presented within its regen grace, then the key is turned off too (it still authenticates, so its holder may stop it)', async () => {
    const key = await createApiKey(t);
    const admin = await tokenForRole(t, 'admin');
    const regen = await t.http().put(`${KEYS}/${key.appname}/regen?grace_seconds=600`).set(bearer(admin)).send({});
    expect(regen.status).toBe(200);

    expect((await t.http().post(REVOKE).send({ key: key.appkey })).status).toBe(200);

    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: false, disabled_reason: 'holder' }));
  });

  it('when the key has expired but is still enabled, then the answer is the same {} and the key is turned off as holder', async () => {
    const key = await createApiKey(t);
    await t.db.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE appname = $1", [key.appname]);

    const res = await t.http().post(REVOKE).send({ key: key.appkey });

    expect([res.status, res.body]).toEqual([200, {}]);
    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: false, disabled_reason: 'holder' }));
    const { rows } = await t.db.query("SELECT details->>'reason' AS reason FROM audit_events WHERE type = 'api_key.disabled' AND appname = $1", [key.appname]);
    expect(rows).toEqual([{ reason: 'holder' }]);
  });

  it('when the body is not {"key": string}, then 400 names the field and nothing changes', async () => {
    const key = await createApiKey(t);

    const missing = await t.http().post(REVOKE).send({});
    const number = await t.http().post(REVOKE).send({ key: 42 });
    const extra = await t.http().post(REVOKE).send({ key: key.appkey, appname: key.appname });

    expect([missing.status, number.status, extra.status]).toEqual([400, 400, 400]);
    expect(missing.body.message).toMatch(/body\.key/);
    expect(number.body.message).toMatch(/body\.key/);
    expect(extra.body.message).toMatch(/appname/);
    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: true }));
  });
});

describe('POST /api/v1/keys/revoke: the token routes\' per-address limit', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_TOKEN_REQUESTS: '3', RATE_LIMIT_TOKEN_WINDOW: '60' });
  });
  afterAll(() => t.close());

  it('when one address sends more than the limit, then the next is 429 with Retry-After', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await t.http().post(REVOKE).send({ key: generateAppkey() }));

    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(answers[3]!.headers['retry-after']).toBeDefined();
  });
});
