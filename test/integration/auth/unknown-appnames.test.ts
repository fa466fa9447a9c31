import crypto from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, randomName } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { OAUTH2 } from '../oauth2/support';

/**
 * Contract, Hardening, "Unknown appnames cost the same": a credential naming an unknown appname gets
 * the same hash and HMAC work, against a dummy key, as one naming a known key, so the time of the
 * refusal does not tell which appnames exist. Timing itself is too noisy to assert here; the work is
 * counted instead, by watching Node's crypto calls (the service's code runs as is).
 */
describe('unknown appnames cost the same work as known ones', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  /** How often `method` of node:crypto ran while `request` was answered. */
  async function cryptoCalls(method: 'createHmac' | 'timingSafeEqual', request: () => Promise<{ status: number }>): Promise<{ calls: number; status: number }> {
    const spy = jest.spyOn(crypto, method);
    const { status } = await request();
    // An HMAC keyed by an appkey (a KeyObject, as request-token.ts makes them); the database driver's
    // own HMACs (SCRAM, on a new connection) take plain buffers and are not this work.
    const calls = method === 'createHmac' ? spy.mock.calls.filter((call) => call[1] instanceof crypto.KeyObject).length : spy.mock.calls.length;
    spy.mockRestore();
    return { calls, status };
  }

  it('when a request token is signed with a wrong appkey, then an unknown appname costs the same HMACs as a known one (API-key route)', async () => {
    // A key not used before: its appkeys are read afresh, as for any first or rare login.
    const key = await createApiKey(t, { role: 'viewer' });
    const exchange = (appname: string) => () => t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(appname, 'ak_not-the-appkey') });

    const known = await cryptoCalls('createHmac', exchange(key.appname));
    const unknown = await cryptoCalls('createHmac', exchange(randomName('nokey')));

    expect([known.status, unknown.status]).toEqual([401, 401]);
    expect(known.calls).toBeGreaterThan(0);
    expect(unknown.calls).toBe(known.calls);
  });

  it('when a client secret is wrong, then an unknown client_id costs the same digests and comparison as a known one (client credentials and revocation)', async () => {
    const [first, second] = [await createApiKey(t, { role: 'viewer' }), await createApiKey(t, { role: 'viewer' })];
    const clientCredentials = (clientId: string) => () =>
      t.http().post(OAUTH2.token).type('form').send({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'ak_wrong' });
    const revoke = (clientId: string) => () => t.http().post(OAUTH2.revoke).type('form').send({ token: 'x', client_id: clientId, client_secret: 'ak_wrong' });

    const known = await cryptoCalls('timingSafeEqual', clientCredentials(first.appname));
    const unknown = await cryptoCalls('timingSafeEqual', clientCredentials(randomName('nokey')));
    const knownRevoke = await cryptoCalls('timingSafeEqual', revoke(second.appname));
    const unknownRevoke = await cryptoCalls('timingSafeEqual', revoke(randomName('nokey')));

    expect([known.status, unknown.status, knownRevoke.status, unknownRevoke.status]).toEqual([401, 401, 401, 401]);
    expect(known.calls).toBeGreaterThan(0);
    expect(unknown.calls).toBe(known.calls);
    expect(unknownRevoke.calls).toBe(knownRevoke.calls);
  });
});
