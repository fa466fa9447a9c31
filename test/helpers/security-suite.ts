import type { Response } from 'supertest';
import { ROLES, type Role } from '../../src/shared/principals';
import { startTestApp, type TestApp } from './app';
import { WEBHOOK_BODY, type BearerRoute } from './bearer-routes';
import { expectError, expectInvalidToken, expectMissingToken } from './errors';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, type TestUser } from './factories';
import { claimsOf, signedByForeignKey, unsignedToken } from './tokens';

/** Long enough for the one call that shows the token was good; short enough to wait out once. */
const ACCESS_TOKEN_TTL = 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const label = (role: Role | null) => role ?? 'no-role';
const withArticle = (word: string) => `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
const nameOf = (route: BearerRoute) => `${route.method.toUpperCase()} ${route.path}`;

/**
 * The same refusals, on every route of the table: no token, a token that is not one of our live
 * access tokens (garbage, expired, signed by another key, unsigned, a refresh or ID token), and a
 * principal whose role is too low. Each refused call leaves the keys and the users as they were.
 */
export function describeBearerSecurity(routes: readonly BearerRoute[]): void {
  describe('every route behind a bearer token', () => {
    let t: TestApp;
    let shortLived: TestApp;
    let admin: TestUser;
    let expired: string;

    beforeAll(async () => {
      // Insecure webhooks: the endpoints the webhook routes are called on sit on loopback.
      const insecure = { WEBHOOK_ALLOW_INSECURE: 'true' };
      [t, shortLived] = await Promise.all([startTestApp(insecure), startTestApp({ ...insecure, ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL) })]);
      admin = await createUser(t, { role: 'admin' });
      expired = await expiredAdminToken(shortLived);
    });
    afterAll(() => Promise.all([t?.close(), shortLived?.close()]));

    it('when the OpenAPI document puts an operation behind a bearer token, then the table has a row for it, and no row is left over', async () => {
      const res = await t.http().get('/api/v1/openapi.json');

      expect(res.status).toBe(200);
      expect(bearerOperations(res.body).sort()).toEqual(routes.map(nameOf).sort());
    });

    describe.each(routes.map((route) => ({ route, name: nameOf(route) })))('$name', ({ route }) => {
      /** A fresh admin login's tokens: live, and of a role allowed everywhere, so only their kind or signature can be refused. */
      const adminLogin = () => loginAs(t, admin);

      it(`when ${withArticle(`${route.allowed.role} user`)} calls it, then ${route.allowed.status}`, async () => {
        const caller = await createUser(t, { role: route.allowed.role });
        const res = await send(t, route, await pathOn(t, route), (await loginAs(t, caller)).access_token, caller);

        expect(res.status).toBe(route.allowed.status);
      });

      it('when no token is sent, then 401 with a bare Bearer challenge, and nothing changes', async () => {
        expectMissingToken(await sendRefused(t, route, undefined));
      });

      it('when the token is not a JWT at all, then 401 invalid_token, and nothing changes', async () => {
        expectInvalidToken(await sendRefused(t, route, 'not.a.token'));
      });

      it('when the access token has expired, then 401 invalid_token, and nothing changes', async () => {
        expectInvalidToken(await sendRefused(shortLived, route, expired));
      });

      it('when an access token’s claims are signed by another ES256 key under our kid, then 401 invalid_token, and nothing changes', async () => {
        const forged = signedByForeignKey((await adminLogin()).access_token);

        expectInvalidToken(await sendRefused(t, route, forged));
      });

      it('when an access token’s claims are signed by another ES256 key under a kid we do not publish, then 401 invalid_token, and nothing changes', async () => {
        const forged = signedByForeignKey((await adminLogin()).access_token, 'a-kid-we-never-published');

        expectInvalidToken(await sendRefused(t, route, forged));
      });

      it('when an unsigned (alg none) copy of an access token is sent, then 401 invalid_token, and nothing changes', async () => {
        const forged = unsignedToken(claimsOf((await adminLogin()).access_token));

        expectInvalidToken(await sendRefused(t, route, forged));
      });

      it('when a refresh token is sent as the bearer token, then 401 invalid_token, and nothing changes', async () => {
        expectInvalidToken(await sendRefused(t, route, (await adminLogin()).refresh_token));
      });

      it('when an ID token is sent as the bearer token, then 401 invalid_token, and nothing changes', async () => {
        expectInvalidToken(await sendRefused(t, route, (await adminLogin()).id_token));
      });

      const refusedKeys = route.keysForbidden ? ([...ROLES, null] as const).map((role) => ({ role, kind: 'API key' as const })) : [];
      const tooLow = [...route.forbidden.flatMap((role) => (['user', 'API key'] as const).map((kind) => ({ role, kind }))), ...refusedKeys].map((c) => ({
        ...c,
        who: withArticle(`${label(c.role)} ${c.kind}`),
      }));
      // Some routes (GET /api/v1/me) refuse no principal: no row for them.
      if (tooLow.length > 0) {
        it.each(tooLow)('when $who calls it, then 403 Forbidden, and nothing changes', async ({ role, kind }) => {
          expectError(await sendRefused(t, route, await tokenOf(t, role, kind)), 403, 'Forbidden');
        });
      }
    });
  });
}

/** An admin's access token, shown to be accepted, then left to expire. */
async function expiredAdminToken(app: TestApp): Promise<string> {
  const login = await loginAs(app, await createUser(app, { role: 'admin' }));
  const issuedBy = Date.now();
  const whileLive = await app.http().get('/api/v1/api-keys').set(bearer(login.access_token));
  expect(whileLive.status).toBe(200);
  await sleep(issuedBy + ACCESS_TOKEN_TTL * 1000 + 100 - Date.now());
  return login.access_token;
}

/** A live access token of a fresh user or API key of that role. */
async function tokenOf(app: TestApp, role: Role | null, kind: 'user' | 'API key'): Promise<string> {
  const login = kind === 'user' ? await loginAs(app, await createUser(app, { role })) : await loginWithApiKey(app, await createApiKey(app, { role }));
  return login.access_token;
}

/**
 * The route's path, with `{appname}` replaced by a fresh key of role viewer (one any role allowed
 * there may manage), `{username}` by a fresh viewer user, `{id}` by a fresh webhook endpoint.
 */
async function pathOn(app: TestApp, route: BearerRoute): Promise<string> {
  if (route.path.includes('{username}')) return route.path.replace('{username}', (await createUser(app, { role: 'viewer' })).username);
  if (route.path.includes('{id}')) {
    const created = await app.http().post('/api/v1/webhooks').set(bearer(await tokenOf(app, 'admin', 'user'))).send(WEBHOOK_BODY);
    if (created.status !== 201) throw new Error(`create webhook failed: ${created.status} ${JSON.stringify(created.body)}`);
    return route.path.replace('{id}', created.body.data.id as string);
  }
  if (!route.path.includes('{appname}')) return route.path;
  const { appname } = await createApiKey(app, { role: 'viewer', description: 'untouched' });
  return route.path.replace('{appname}', appname);
}

function send(app: TestApp, route: BearerRoute, path: string, token: string | undefined, caller: { password?: string } = {}) {
  const req = app.http()[route.method](path);
  if (token !== undefined) req.set(bearer(token));
  const body = route.body?.(caller);
  if (!body) return req;
  return route.form ? req.type('form').send(body) : req.send(body);
}

/** Calls the route with this token (none when undefined), and checks that no key or user was created, changed or deleted. */
async function sendRefused(app: TestApp, route: BearerRoute, token: string | undefined): Promise<Response> {
  const path = await pathOn(app, route);
  const before = await principalRows(app);

  const res = await send(app, route, path, token);

  expect(await principalRows(app)).toEqual(before);
  return res;
}

/** Every key and every user, all columns, the appkey's digest and ciphertext and the password hash included. */
async function principalRows(app: TestApp): Promise<Record<string, unknown>[][]> {
  const { rows: keys } = await app.db.query('SELECT * FROM api_keys ORDER BY appname');
  const { rows: users } = await app.db.query('SELECT * FROM users ORDER BY username');
  return [keys, users];
}

/** "GET /path" for every operation of an OpenAPI document that requires the bearerAuth scheme. */
function bearerOperations(document: { paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>> }): string[] {
  const templated = Object.keys(document.paths)
    .filter((path) => path.includes('{'))
    .map((path) => ({ path, pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
  // A concrete path listed beside a templated one that matches it (GET /api/v1/api-keys/import beside
  // GET /api/v1/api-keys/{appname}: the key named "import") is that same operation, checked by its row.
  const sameAsTemplated = (path: string, method: string) =>
    !path.includes('{') && templated.some((t) => t.pattern.test(path) && method in document.paths[t.path]!);
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method, operation]) => operation.security?.some((requirement) => 'bearerAuth' in requirement) && !sameAsTemplated(path, method))
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
}
