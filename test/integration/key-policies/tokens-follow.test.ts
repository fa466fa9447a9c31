import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, loginWithApiKey, tokenForRole } from '../../helpers/factories';
import { claimsOf, signRequestToken } from '../../helpers/tokens';
import type { TokenResponse } from '../../../src/tokens/tokens.responses';
import { KEYS, createKeyWithPolicy, nowSeconds, putPolicy } from './support';
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE } from '../exchange-dpop/support';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Contract, "Key policies", "Tokens follow the key". */
describe('key policies: tokens follow the key', () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
  });
  afterAll(() => t.close());

  /** What a key's tokens can still do: call a key route, be introspected as active, be refreshed. */
  async function whatWorks(tokens: TokenResponse) {
    const read = await t.http().get(KEYS).set(bearer(tokens.access_token));
    const introspected = await t.http().post('/oauth2/introspect').set(bearer(admin)).type('form').send({ token: tokens.access_token });
    const refreshed = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: tokens.refresh_token });
    return { read: read.status, active: introspected.body.active as boolean, refresh: refreshed.status };
  }

  it('when a key is turned off, then its tokens stop at the next call, and turning it on again does not bring them back', async () => {
    const key = await createKeyWithPolicy(t, {});
    const tokens = await loginWithApiKey(t, key);
    expect((await t.http().get(KEYS).set(bearer(tokens.access_token))).status).toBe(200);

    await putPolicy(t, key.appname, { enabled: false });
    const off = await whatWorks(tokens);
    await putPolicy(t, key.appname, { enabled: true });
    const onAgain = await whatWorks(tokens);

    expect(off).toEqual({ read: 401, active: false, refresh: 401 });
    expect(onAgain).toEqual({ read: 401, active: false, refresh: 401 });
    expect((await loginWithApiKey(t, key)).access_token).toBeDefined();
  });

  it('when a key is deleted, then its tokens stop at the next call', async () => {
    const key = await createKeyWithPolicy(t, {});
    const tokens = await loginWithApiKey(t, key);

    await t.http().delete(`${KEYS}/${key.appname}`).set(bearer(admin));

    expect(await whatWorks(tokens)).toEqual({ read: 401, active: false, refresh: 401 });
  });

  it('when a key expires, then no token, refresh token or session of it outlives the moment, and its tokens stop then', async () => {
    const expiresAt = nowSeconds() + 3;
    const key = await createKeyWithPolicy(t, { expires_at: expiresAt });

    const tokens = await loginWithApiKey(t, key);
    const cc = await t.http().post('/oauth2/token').type('form').send({ grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey });

    for (const token of [tokens.access_token, tokens.refresh_token, tokens.id_token, cc.body.access_token as string]) {
      expect(claimsOf(token).exp).toBeLessThanOrEqual(expiresAt);
    }
    expect(nowSeconds() + tokens.expires_in).toBeLessThanOrEqual(expiresAt + 1);
    expect(nowSeconds() + tokens.refresh_expires_in).toBeLessThanOrEqual(expiresAt + 1);
    const { rows } = await t.db.query<{ ends: number }>(
      'SELECT extract(epoch FROM expires_at)::float8 AS ends FROM sessions WHERE id = $1',
      [claimsOf(tokens.access_token).sid],
    );
    expect(rows[0]!.ends).toBeLessThanOrEqual(expiresAt);
    expect((await t.http().get(KEYS).set(bearer(tokens.access_token))).status).toBe(200);

    await sleep((expiresAt - Date.now() / 1000 + 0.2) * 1000);

    expect(await whatWorks(tokens)).toEqual({ read: 401, active: false, refresh: 401 });
  });

  it('when a PUT brings a key\'s expiry forward, then its live sessions end by then too', async () => {
    const key = await createKeyWithPolicy(t, {});
    const tokens = await loginWithApiKey(t, key);
    const soon = nowSeconds() + 600;

    await putPolicy(t, key.appname, { expires_at: soon });
    const refreshed = await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: tokens.refresh_token });

    expect(refreshed.status).toBe(200);
    expect(claimsOf(refreshed.body.refresh_token as string).exp).toBeLessThanOrEqual(soon);
    expect(claimsOf(refreshed.body.access_token as string).exp).toBeLessThanOrEqual(soon);
    const { rows } = await t.db.query<{ ends: number }>('SELECT extract(epoch FROM expires_at)::float8 AS ends FROM sessions WHERE id = $1', [
      claimsOf(tokens.access_token).sid,
    ]);
    expect(rows[0]!.ends).toBeLessThanOrEqual(soon);
  });

  it('when a PUT brings a key\'s expiry forward, then a token exchanged from its token afterwards does not outlive it either (review finding)', async () => {
    const key = await createKeyWithPolicy(t, {});
    const cc = await t.http().post('/oauth2/token').type('form').send({ grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey });
    const soon = nowSeconds() + 60;

    await putPolicy(t, key.appname, { expires_at: soon });
    const exchanged = await t.http().post('/oauth2/token').type('form').send({ grant_type: TOKEN_EXCHANGE, subject_token: cc.body.access_token, subject_token_type: ACCESS_TOKEN_TYPE });

    expect(exchanged.status).toBe(200);
    expect(claimsOf(exchanged.body.access_token as string).exp).toBeLessThanOrEqual(soon);
    expect(exchanged.body.expires_in).toBeLessThanOrEqual(60);
  });
});

/**
 * Contract, "Key policies": allowed_addresses at authentication and, for tokens, on this service's
 * routes and on refresh, behind a proxy (TRUST_PROXY), for IPv4, IPv6 and IPv4-mapped IPv6 clients.
 */
describe('key policies: allowed addresses behind TRUST_PROXY', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'loopback' });
  });
  afterAll(() => t.close());

  const from = (address: string) => ({ 'X-Forwarded-For': address });
  const exchange = (key: { appname: string; appkey: string }, address: string) =>
    t.http().post('/api/v1/auth/token').set(from(address)).send({ jwt: signRequestToken(key.appname, key.appkey) });

  it.each([
    ['an IPv4 client in a range', '203.0.113.0/24', '203.0.113.9', 200],
    ['an IPv4 client outside it', '203.0.113.0/24', '198.51.100.9', 401],
    ['an IPv4-mapped IPv6 client in an IPv4 range', '203.0.113.0/24', '::ffff:203.0.113.9', 200],
    ['an IPv4-mapped IPv6 client outside it', '203.0.113.0/24', '::ffff:198.51.100.9', 401],
    ['an IPv6 client in a range', '2001:db8::/32', '2001:db8:1::7', 200],
    ['an IPv6 client outside it', '2001:db8::/32', '2001:db9::7', 401],
    ['an IPv4 client against an IPv6 range', '2001:db8::/32', '203.0.113.9', 401],
    ['an IPv4 client named exactly', '203.0.113.9', '203.0.113.9', 200],
    ['an IPv4-mapped range and an IPv4 client', '::ffff:203.0.113.0/120', '203.0.113.9', 200],
  ])('when %s (%s) exchanges a request token from %s, then %i', async (_case, allowed, address, status) => {
    const key = await createKeyWithPolicy(t, { allowed_addresses: [allowed] });

    const res = await exchange(key, address);

    expect(res.status).toBe(status);
    if (status === 401) expect(res.body.message).toBe('address not allowed for this API key');
  });

  it('when a key\'s token is used from an address outside its list, then key routes and refresh refuse it at that call, and the refresh token stays unused', async () => {
    const key = await createKeyWithPolicy(t, { allowed_addresses: ['203.0.113.0/24', '2001:db8::/32'] });
    const tokens = (await exchange(key, '203.0.113.9')).body as TokenResponse;

    const inside = await t.http().get(KEYS).set(bearer(tokens.access_token)).set(from('::ffff:203.0.113.77'));
    const inside6 = await t.http().get(KEYS).set(bearer(tokens.access_token)).set(from('2001:db8::1'));
    const outside = await t.http().get(`${KEYS}/${key.appname}`).set(bearer(tokens.access_token)).set(from('198.51.100.9'));
    const refreshOutside = await t.http().post('/oauth2/token').type('form').set(from('198.51.100.9')).send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    const refreshInside = await t.http().post('/api/auth/bearer/refresh').type('form').set(from('203.0.113.10')).send({ refresh_token: tokens.refresh_token });

    expect(inside.status).toBe(200);
    expect(inside6.status).toBe(200);
    expect(outside.status).toBe(401);
    expect(refreshOutside.status).toBe(400);
    expect(refreshOutside.body.error).toBe('invalid_grant');
    expect(refreshInside.status).toBe(200);
  });

  it('when a key\'s token is exchanged (RFC 8693) from an address outside its list, then the exchange is refused; from inside, it goes ahead', async () => {
    const key = await createKeyWithPolicy(t, { allowed_addresses: ['203.0.113.0/24'] });
    const subject = ((await exchange(key, '203.0.113.9')).body as TokenResponse).access_token;
    const exchangeFrom = (address: string) =>
      t.http().post('/oauth2/token').type('form').set(from(address)).send({ grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE });

    const outside = await exchangeFrom('198.51.100.9');
    const inside = await exchangeFrom('203.0.113.10');

    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe('invalid_request');
    expect(inside.status).toBe(200);
  });

  it('when a key\'s token is the actor_token of an exchange from an address outside its list, then the exchange is refused as for a subject (review finding)', async () => {
    const key = await createKeyWithPolicy(t, { allowed_addresses: ['203.0.113.0/24'] });
    const actor = ((await exchange(key, '203.0.113.9')).body as TokenResponse).access_token;
    const subject = await tokenForRole(t, 'viewer');
    const exchangeFrom = (address: string) =>
      t
        .http()
        .post('/oauth2/token')
        .type('form')
        .set(from(address))
        .send({ grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE, actor_token: actor, actor_token_type: ACCESS_TOKEN_TYPE });

    const outside = await exchangeFrom('198.51.100.9');
    const inside = await exchangeFrom('203.0.113.10');

    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe('invalid_request');
    expect(inside.status).toBe(200);
    expect(claimsOf(inside.body.access_token as string).act).toEqual({ sub: claimsOf(actor).sub });
  });

  it('when the list changes, then a token already issued follows the new list at its next call', async () => {
    const key = await createKeyWithPolicy(t, { allowed_addresses: ['203.0.113.0/24'] });
    const tokens = (await exchange(key, '203.0.113.9')).body as TokenResponse;

    await putPolicy(t, key.appname, { allowed_addresses: ['192.0.2.0/24'] });

    expect((await t.http().get(KEYS).set(bearer(tokens.access_token)).set(from('203.0.113.9'))).status).toBe(401);
    expect((await t.http().get(KEYS).set(bearer(tokens.access_token)).set(from('192.0.2.1'))).status).toBe(200);
  });

  it('when a user\'s token is used from anywhere, then no key policy applies to it', async () => {
    const admin = await tokenForRole(t, 'admin');

    expect((await t.http().get(KEYS).set(bearer(admin)).set(from('198.51.100.200'))).status).toBe(200);
  });
});
