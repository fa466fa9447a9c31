import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, type TestUser } from '../../helpers/factories';
import { expectError, expectOAuthError } from '../../helpers/errors';
import { eventsOf, JWT_BEARER, stateOf, tokenRequest } from './support';

describe('POST /oauth2/token: malformed requests (RFC 6749 §5.2)', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it.each([
    ['username', `grant_type=password&username=a&username=b&password=x`],
    ['grant_type', `grant_type=password&grant_type=client_credentials&username=a&password=x`],
    ['client_id', `grant_type=password&username=a&password=x&client_id=a&client_id=b`],
  ])('when %s is sent twice, then 400 invalid_request naming it, nothing changes and no login is tried', async (name, body) => {
    const before = await stateOf(t);

    const res = await tokenRequest(t, body);

    expectOAuthError(res, 400, 'invalid_request', { message: name });
    expect(await stateOf(t)).toEqual(before);
    expect(await eventsOf(t, res)).toEqual([]);
  });

  it.each(['authorization_code', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code', 'PASSWORD'])(
    'when grant_type is %s, then 400 unsupported_grant_type',
    async (grantType) => {
      const res = await tokenRequest(t, { grant_type: grantType, code: 'x', ...user });

      expectOAuthError(res, 400, 'unsupported_grant_type');
    },
  );

  it.each([
    ['grant_type', () => ({ ...user })],
    ['username', () => ({ grant_type: 'password', password: user.password })],
    ['password', () => ({ grant_type: 'password', username: user.username })],
    ['refresh_token', () => ({ grant_type: 'refresh_token' })],
    ['assertion', () => ({ grant_type: JWT_BEARER })],
  ])('when %s is missing, then 400 invalid_request naming it, and no login is tried', async (name, body) => {
    const before = await stateOf(t);

    const res = await tokenRequest(t, body());

    expectOAuthError(res, 400, 'invalid_request', { message: `Parameter ${name} is required` });
    expect(await stateOf(t)).toEqual(before);
    expect(await eventsOf(t, res)).toEqual([]);
  });

  it.each([
    ['a JSON number', { grant_type: 'password', username: 'someone', password: 12345 }],
    ['a JSON array', ['grant_type', 'password']],
    ['a JSON object value', { grant_type: { value: 'password' } }],
  ])('when the body carries %s, then 400 invalid_request', async (_, body) => {
    const res = await t.http().post('/oauth2/token').send(body as object);

    expectOAuthError(res, 400, 'invalid_request');
  });

  it('when the JSON body is malformed, then 400 invalid_request', async () => {
    const res = await t.http().post('/oauth2/token').set('Content-Type', 'application/json').send('{"grant_type": "password",');

    expectOAuthError(res, 400, 'invalid_request');
  });

  it('when a form carries more than 1000 fields, then 400 invalid_request', async () => {
    const res = await tokenRequest(t, Array.from({ length: 1001 }, (_, i) => `f${i}=x`).join('&'));

    expectOAuthError(res, 400, 'invalid_request');
  });

  it('when the body is over 64 KiB, then 413', async () => {
    const res = await tokenRequest(t, { grant_type: 'password', ...user, padding: 'x'.repeat(65 * 1024) });

    expectError(res, 413, 'PayloadTooLarge');
  });

  it('when the body is neither a form nor JSON, then 415', async () => {
    const res = await t.http().post('/oauth2/token').set('Content-Type', 'text/plain').send('grant_type=password');

    expectError(res, 415, 'UnsupportedMediaType');
  });

  it('when the endpoint is called with GET, then 405 with Allow: POST', async () => {
    const res = await t.http().get('/oauth2/token');

    expectError(res, 405, 'MethodNotAllowed');
    expect(res.headers['allow']).toBe('POST');
  });

  it.each([
    ['username', 'password', 'a\u0000b'],
    ['password', 'password', 'a\u0000b'],
    ['username', 'password', 'a\ud800b'],
    ['client_id', 'password', 'a\u0000b'],
    ['scope', 'password', 'openid\u0000'],
    ['refresh_token', 'refresh_token', 'a\u0000b'],
    ['assertion', JWT_BEARER, 'a\udc00b'],
    ['grant_type', 'password', 'password\u0000'],
  ])('when %s (grant %s) holds a NUL or an unpaired surrogate, then 400 invalid_request naming it, and no login is tried', async (name, grantType, value) => {
    const before = await stateOf(t);

    const res = await t.http().post('/oauth2/token').send({ grant_type: grantType, ...user, refresh_token: 'x', assertion: 'x', [name]: value });

    expectOAuthError(res, 400, 'invalid_request', { message: name });
    expect(await stateOf(t)).toEqual(before);
    expect(await eventsOf(t, res)).toEqual([]);
  });
});

describe('POST /oauth2/token: failed password grants count against the failed-login limits of the own route', () => {
  let t: TestApp;
  let address = 0;

  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PASSWORD_FAILURES: '3',
      RATE_LIMIT_PASSWORD_WINDOW: '60',
      // Each test claims its own client address through X-Forwarded-For.
      TRUST_PROXY: 'loopback',
    });
  });
  afterAll(() => t.close());

  /** A fresh client address per test, so the per-address counters of one test do not reach the next. */
  const freshAddress = () => `10.1.0.${++address}`;
  const viaEndpoint = (from: string, user: TestUser, password: string) =>
    tokenRequest(t, { grant_type: 'password', username: user.username, password }, { headers: { 'X-Forwarded-For': from } });
  const viaOwnRoute = (from: string, user: TestUser, password: string) =>
    t.http().post('/api/auth/bearer/token').set('X-Forwarded-For', from).type('form').send({ username: user.username, password });

  function expectTooManyRequests(res: Response): void {
    expectError(res, 429, 'TooManyRequests');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  }

  it('when failures alternate between both routes up to the limit, then the next attempt at either is 429, the right password too', async () => {
    const from = freshAddress();
    const user = await createUser(t, { role: 'viewer' });
    expect((await viaOwnRoute(from, user, 'wrong-password-1')).status).toBe(401);
    expectOAuthError(await viaEndpoint(from, user, 'wrong-password-1'), 400, 'invalid_grant');
    expect((await viaOwnRoute(from, user, 'wrong-password-1')).status).toBe(401);

    const endpoint = await viaEndpoint(from, user, user.password);
    const ownRoute = await viaOwnRoute(from, user, user.password);

    expectTooManyRequests(endpoint);
    expectTooManyRequests(ownRoute);
  });

  it('when the failures happen at /oauth2/token only, then the own route refuses the next attempt with 429', async () => {
    const from = freshAddress();
    const user = await createUser(t, { role: 'viewer' });
    for (let i = 0; i < 3; i++) expectOAuthError(await viaEndpoint(from, user, 'wrong-password-1'), 400, 'invalid_grant');

    const res = await viaOwnRoute(from, user, user.password);

    expectTooManyRequests(res);
  });

  it('when requests fail for a missing field, another grant, or succeed, then they do not count as failed password attempts', async () => {
    const from = freshAddress();
    const user = await createUser(t, { role: 'viewer' });
    for (let i = 0; i < 3; i++) {
      expectOAuthError(await tokenRequest(t, { grant_type: 'password', username: user.username }, { headers: { 'X-Forwarded-For': from } }), 400, 'invalid_request');
      expectOAuthError(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', username: user.username }, { headers: { 'X-Forwarded-For': from } }), 400, 'invalid_grant');
      expect((await viaEndpoint(from, user, user.password)).status).toBe(200);
    }

    const res = await viaEndpoint(from, user, user.password);

    expect(res.status).toBe(200);
  });
});
