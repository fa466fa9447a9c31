import type { LoginFailureReason } from '../../../src/shared/errors';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, createUser, randomName, type TestApiKey } from '../../helpers/factories';
import { hmacSignedToken, signRequestToken, unsignedToken } from '../../helpers/tokens';
import { nowSeconds, readKey } from '../api-keys/support';
import { auditTableText, eventsOfRequest, eventsWhere, LOOPBACK, newAdmin, type Admin } from './support';

const API_KEY_ROUTE = '/api/v1/auth/token';
const PASSWORD_ROUTE = '/api/auth/bearer/token';

describe('failed logins are recorded, without the secret that was tried', () => {
  let t: TestApp;
  let admin: Admin;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await newAdmin(t);
  });
  afterAll(() => t.close());

  const exchange = (jwt: string) => t.http().post(API_KEY_ROUTE).send({ jwt });
  const passwordLogin = (username: string, password: string) => t.http().post(PASSWORD_ROUTE).type('form').send({ username, password });

  /** The one login.failed the response's request recorded, with nothing else of that request. */
  async function theFailedLogin(res: Parameters<typeof eventsOfRequest>[2]) {
    const events = await eventsOfRequest(t, admin.token, res, { actor: 'anonymous' });
    expect(events).toHaveLength(1);
    return events[0]!;
  }

  /** The login.failed event a direct (loopback) request to `route` must have recorded. */
  const failedLogin = (
    res: { headers: Record<string, string> },
    route: string,
    reason: LoginFailureReason,
    who: { appname: string | null; username: string | null },
  ) => ({
    id: expect.any(Number),
    occurred_at: expect.any(String),
    type: 'login.failed',
    actor: 'anonymous',
    ...who,
    client_address: expect.stringMatching(LOOPBACK),
    request_id: res.headers['x-request-id'],
    details: { route, reason },
  });

  describe('with a request token (API key)', () => {
    const cases: [string, LoginFailureReason, (key: TestApiKey) => { jwt: string; appname: string | null }][] = [
      [
        'names an appname that does not exist',
        'unknown_api_key',
        (key) => {
          const ghost = randomName('ghost');
          return { jwt: signRequestToken(ghost, key.appkey), appname: ghost };
        },
      ],
      ['is signed with another secret', 'invalid_request_token', (key) => ({ jwt: signRequestToken(key.appname, 'ak_not-the-appkey'), appname: key.appname })],
      [
        'has expired',
        'expired_request_token',
        (key) => ({
          jwt: signRequestToken(key.appname, key.appkey, { claims: { iat: nowSeconds() - 120, exp: nowSeconds() - 60 } }),
          appname: key.appname,
        }),
      ],
      ['is not a JWT', 'malformed_request_token', () => ({ jwt: 'not-a-jwt', appname: null })],
      ['has a payload that is not JSON', 'malformed_request_token', (key) => ({ jwt: hmacSignedToken('not json', key.appkey), appname: null })],
      ['is unsigned (alg none)', 'malformed_request_token', (key) => ({ jwt: unsignedToken({ iss: key.appname, iat: nowSeconds() }), appname: null })],
    ];

    it.each(cases)('when the request token %s, then 401 and one login.failed with reason %s', async (_case, reason, build) => {
      const key = await createApiKey(t, { role: 'viewer' });
      const { jwt, appname } = build(key);

      const res = await exchange(jwt);

      expect(res.status).toBe(401);
      expect(res.text).not.toContain(reason);
      expect(await theFailedLogin(res)).toEqual(failedLogin(res, API_KEY_ROUTE, reason, { appname, username: null }));
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'token.issued' })).toEqual([]);
      const table = await auditTableText(t);
      expect(table).not.toContain(key.appkey);
      expect(table).not.toContain(jwt);
    });

    it('when a request token is exchanged twice, then the replay records login.failed replayed_request_token and no second token.issued', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const jwt = signRequestToken(key.appname, key.appkey);
      await exchange(jwt).expect(200);

      const res = await exchange(jwt);

      expect(res.status).toBe(401);
      expect(await theFailedLogin(res)).toEqual(
        expect.objectContaining({ appname: key.appname, details: { route: API_KEY_ROUTE, reason: 'replayed_request_token' } }),
      );
      expect(await eventsWhere(t, admin.token, { appname: key.appname, type: 'token.issued' })).toHaveLength(1);
      expect(await auditTableText(t)).not.toContain(jwt);
    });

    it('when one request token is exchanged by several clients at once, then exactly one token.issued and a replay login.failed for each other', async () => {
      const key = await createApiKey(t, { role: 'viewer' });
      const jwt = signRequestToken(key.appname, key.appkey);

      const responses = await Promise.all(Array.from({ length: 5 }, () => exchange(jwt)));

      expect(responses.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
      const events = await eventsWhere(t, admin.token, { appname: key.appname });
      expect(events.filter((e) => e.type === 'token.issued').map((e) => e.details.session_id)).toEqual([
        responses.find((r) => r.status === 200)!.body['session-state'],
      ]);
      expect(events.filter((e) => e.type === 'login.failed').map((e) => e.details.reason)).toEqual(Array(4).fill('replayed_request_token'));
    });
  });

  describe('with a username and password', () => {
    const cases: [string, LoginFailureReason, () => Promise<{ username: string; password: string; secrets: string[] }>][] = [
      [
        'the user does not exist',
        'unknown_user',
        async () => {
          const password = randomName('tried-password');
          return { username: randomName('nobody'), password, secrets: [password] };
        },
      ],
      [
        'the password is wrong',
        'wrong_password',
        async () => {
          const user = await createUser(t, { role: 'viewer' });
          const password = randomName('wrong-password');
          return { username: user.username, password, secrets: [password, user.password] };
        },
      ],
      [
        'the user is disabled (right password)',
        'user_disabled',
        async () => {
          const user = await createUser(t, { role: 'viewer', disabled: true });
          return { ...user, secrets: [user.password] };
        },
      ],
    ];

    it.each(cases)('when %s, then 401 and one login.failed with reason %s naming the username', async (_case, reason, build) => {
      const { username, password, secrets } = await build();

      const res = await passwordLogin(username, password);

      expect(res.status).toBe(401);
      expect(res.text).not.toContain(reason);
      expect(await theFailedLogin(res)).toEqual(failedLogin(res, PASSWORD_ROUTE, reason, { appname: null, username }));
      expect(await eventsWhere(t, admin.token, { actor: `user:${username}` })).toEqual([]);
      const table = await auditTableText(t);
      for (const secret of secrets) expect(table).not.toContain(secret);
    });
  });
});

describe('behind a trusted proxy (TRUST_PROXY=loopback)', () => {
  let t: TestApp;
  let admin: Admin;

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'loopback' });
    admin = await newAdmin(t);
  });
  afterAll(() => t.close());

  it('when a client behind the proxy fails and then succeeds to log in, then both events carry the forwarded address, as last_ip does', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const fromClient = (jwt: string) => t.http().post(API_KEY_ROUTE).set('X-Forwarded-For', '203.0.113.9').send({ jwt });

    await fromClient(signRequestToken(key.appname, 'ak_not-the-appkey')).expect(401);
    await fromClient(signRequestToken(key.appname, key.appkey)).expect(200);

    const events = await eventsWhere(t, admin.token, { appname: key.appname });
    expect(events.map((e) => [e.type, e.client_address])).toEqual([
      ['token.issued', '203.0.113.9'],
      ['login.failed', '203.0.113.9'],
      ['api_key.created', expect.stringMatching(LOOPBACK)],
    ]);
    expect((await readKey(t, key.appname)).body.data.last_ip).toBe('203.0.113.9');
  });
});
