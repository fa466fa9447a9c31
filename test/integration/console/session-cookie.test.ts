import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createUser, type TestUser } from '../../helpers/factories';
import { expectError } from '../../helpers/errors';
import { callProtected, refreshWith } from '../auth/support';
import { eventsWhere, newAdmin } from '../audit/support';

const SESSION = '/console/session';
const FROM_CONSOLE = { 'X-Console-Session': '1' };

/** The console's sign-in: the password grant for the public client `console`. */
async function consoleSignIn(t: TestApp, user: TestUser): Promise<{ access_token: string; refresh_token: string }> {
  const res = await t.http().post('/oauth2/token').type('form').send({ grant_type: 'password', username: user.username, password: user.password, client_id: 'console' });
  expect(res.status).toBe(200);
  return res.body;
}

/** The Set-Cookie lines of an answer. */
const cookiesOf = (res: Response): string[] => ([] as string[]).concat(res.headers['set-cookie'] ?? []);

/** The value the answer sets the named cookie to. */
function cookieValue(res: Response, name = 'console_session'): string {
  const line = cookiesOf(res).find((c) => c.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie in ${JSON.stringify(cookiesOf(res))}`);
  return line.slice(name.length + 1).split(';')[0]!;
}

describe('the console session route: the refresh token in a cookie only the console’s own requests may use', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'loopback' });
    user = await createUser(t, { role: 'editor' });
  });
  afterAll(() => t.close());

  /** Signs in as the console does and hands the refresh token over; returns the cookie's refresh token. */
  async function handOver(): Promise<{ res: Response; cookie: string; signedIn: { access_token: string; refresh_token: string } }> {
    const signedIn = await consoleSignIn(t, user);
    const res = await t.http().put(SESSION).set(FROM_CONSOLE).send({ refresh_token: signedIn.refresh_token });
    expect(res.status).toBe(200);
    return { res, cookie: cookieValue(res), signedIn };
  }

  const renew = (cookie: string, headers: Record<string, string> = FROM_CONSOLE) => t.http().post(SESSION).set(headers).set('Cookie', `console_session=${cookie}`);

  it('when the console hands over its refresh token on loopback HTTP, then an access token for the page, and the rotated refresh token in a cookie: HttpOnly, SameSite=Strict, its own path, not Secure', async () => {
    const { res, cookie, signedIn } = await handOver();

    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ meta: { code: 200, count: 1 }, data: { access_token: expect.any(String), token_type: 'bearer', expires_in: 300, scope: 'openid api-keys:read api-keys:write' } });
    expect(JSON.stringify(res.body)).not.toContain(cookie);
    const [line] = cookiesOf(res);
    expect(line).toMatch(/^console_session=[\w-]+\.[\w-]+\.[\w-]+; Max-Age=\d+; Path=\/console\/session; Expires=[^;]+; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toBe(signedIn.refresh_token);
    expect((await callProtected(t, res.body.data.access_token)).status).toBe(200);
  });

  it('when the console renews through the cookie, then a new access token and a new refresh token (one use): the one before is spent, and presenting it again ends the session', async () => {
    const { cookie } = await handOver();

    const renewed = await renew(cookie);
    const next = cookieValue(renewed);

    expect(renewed.status).toBe(200);
    expect(next).not.toBe(cookie);
    expect((await callProtected(t, renewed.body.data.access_token)).status).toBe(200);
    const reused = await renew(cookie);
    expectError(reused, 401, 'Unauthorized', 'The console session ended');
    expect(cookiesOf(reused)).toEqual([expect.stringMatching(/^console_session=; Path=\/console\/session; Expires=Thu, 01 Jan 1970/)]);
    // Reuse is theft: the session is revoked, the newest refresh token and the access token with it.
    expectError(await renew(next), 401, 'Unauthorized');
    expect((await callProtected(t, renewed.body.data.access_token)).status).toBe(401);
  });

  it('when the refresh token the sign-in got is used again after the hand-over, then that is reuse: the cookie’s session ends', async () => {
    const { cookie, signedIn } = await handOver();

    expect((await refreshWith(t, signedIn.refresh_token)).status).toBe(401);

    expectError(await renew(cookie), 401, 'Unauthorized');
  });

  it('when there is no cookie, then 204 and nothing is set: nothing to resume', async () => {
    const res = await t.http().post(SESSION).set(FROM_CONSOLE);

    expect(res.status).toBe(204);
    expect(cookiesOf(res)).toEqual([]);
  });

  it.each([
    ['no custom header (a form or a simple fetch from another origin)', {}],
    ['the header with another value', { 'X-Console-Session': 'yes' }],
    ['Sec-Fetch-Site cross-site', { ...FROM_CONSOLE, 'Sec-Fetch-Site': 'cross-site' }],
    ['Sec-Fetch-Site same-site (another origin of the site, e.g. another port)', { ...FROM_CONSOLE, 'Sec-Fetch-Site': 'same-site' }],
    ['an Origin of another host', { ...FROM_CONSOLE, Origin: 'http://evil.example' }],
    ['an Origin of another port', { ...FROM_CONSOLE, Origin: 'http://127.0.0.1:1' }],
    ['an opaque Origin', { ...FROM_CONSOLE, Origin: 'null' }],
  ])('when a request with the cookie has %s, then 403, and the cookie is neither used nor changed', async (_what, headers) => {
    const { cookie } = await handOver();

    for (const method of ['post', 'delete'] as const) {
      const res = await t.http()[method](SESSION).set(headers as Record<string, string>).set('Cookie', `console_session=${cookie}`);
      expectError(res, 403, 'Forbidden', 'The console session takes only');
      expect(cookiesOf(res)).toEqual([]);
    }
    expect((await renew(cookie)).status).toBe(200);
  });

  it('when the console’s own origin is in Origin and Sec-Fetch-Site says same-origin, then it is served', async () => {
    const { cookie } = await handOver();
    const host = new URL(t.baseUrl).host;

    expect((await renew(cookie, { ...FROM_CONSOLE, Origin: `http://${host}`, 'Sec-Fetch-Site': 'same-origin' })).status).toBe(200);
  });

  it('when the console signs out, then the session is revoked (its access token too) and the cookie cleared; the old cookie renews nothing', async () => {
    const { res, cookie } = await handOver();
    const admin = await newAdmin(t);

    const out = await t.http().delete(SESSION).set(FROM_CONSOLE).set('Cookie', `console_session=${cookie}`);

    expect(out.status).toBe(204);
    expect(cookiesOf(out)).toEqual([expect.stringMatching(/^console_session=; Path=\/console\/session; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict$/)]);
    expect((await callProtected(t, res.body.data.access_token)).status).toBe(401);
    expectError(await renew(cookie), 401, 'Unauthorized');
    const revoked = (await eventsWhere(t, admin.token, { type: 'session.revoked', username: user.username })).filter((e) => e.request_id === out.headers['x-request-id']);
    expect(revoked.map((e) => e.details.reason)).toEqual(['revoked by client (refresh token)']);
    expect((await t.http().delete(SESSION).set(FROM_CONSOLE)).status).toBe(204);
  });

  it('when a refresh token of another client (not the console’s) is handed over, then 401 and no cookie', async () => {
    const other = await t.http().post('/api/auth/bearer/token').type('form').send(user);

    const res = await t.http().put(SESSION).set(FROM_CONSOLE).send({ refresh_token: other.body.refresh_token });

    expectError(res, 401, 'Unauthorized');
    expect(cookiesOf(res).every((c) => c.startsWith('console_session=;'))).toBe(true);
  });

  it('when the hand-over body is not as it should be, then 400 naming the field', async () => {
    expectError(await t.http().put(SESSION).set(FROM_CONSOLE).send({ refresh_token: 'x', access_token: 'y' }), 400, 'BadRequest', /^body: unknown field "access_token"$/);
    expectError(await t.http().put(SESSION).set(FROM_CONSOLE).send({}), 400, 'BadRequest', /^body\.refresh_token: is required$/);
  });

  it('when the console is reached over HTTPS (a trusted proxy says so) on a public name, then the cookie is Secure and named __Secure-console_session', async () => {
    const signedIn = await consoleSignIn(t, user);

    const res = await t
      .http()
      .put(SESSION)
      .set(FROM_CONSOLE)
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'keys.example.com')
      .set('Origin', 'https://keys.example.com')
      .send({ refresh_token: signedIn.refresh_token });

    expect(res.status).toBe(200);
    expect(cookiesOf(res)[0]).toMatch(/^__Secure-console_session=[^;]+; Max-Age=\d+; Path=\/console\/session; Expires=[^;]+; HttpOnly; Secure; SameSite=Strict$/);
  });

  it('when the console is reached over plain HTTP on a name that is not loopback, then the hand-over is refused (a browser would drop a Secure cookie) and the refresh token is not spent', async () => {
    const signedIn = await consoleSignIn(t, user);

    const res = await t.http().put(SESSION).set(FROM_CONSOLE).set('X-Forwarded-Host', 'keys.example.com').set('Origin', 'http://keys.example.com').send({ refresh_token: signedIn.refresh_token });

    expectError(res, 403, 'Forbidden', 'only over HTTPS, or plain HTTP on a loopback address');
    expect((await refreshWith(t, signedIn.refresh_token)).status).toBe(200);
  });

  it('when the cookie reaches any other path (it never should: its path is the session route), then it counts for nothing there', async () => {
    const { cookie } = await handOver();

    const res = await t.http().get('/api/v1/api-keys').set('Cookie', `console_session=${cookie}`);

    expect(res.status).toBe(401);
    expect(bearer('x')).toBeDefined();
  });
});

describe('the console session route when the console is off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ CONSOLE_ENABLED: 'false' });
  });
  afterAll(() => t.close());

  it('when CONSOLE_ENABLED=false, then /console/session is 404 like the rest of /console/', async () => {
    expectError(await t.http().post(SESSION).set(FROM_CONSOLE), 404, 'NotFound');
  });
});
