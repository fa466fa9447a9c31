import { createPublicKey, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { startTestApp, type TestApp } from '../helpers/app';
import { bearer, createApiKey, createUser, loginAs, loginWithApiKey, tokenForRole } from '../helpers/factories';
import { claimsOf } from '../helpers/tokens';
import {
  DbGuard,
  KEYS,
  PROPERTY_TIMEOUT,
  buildJwt,
  exchange,
  garbageAuthorization,
  headerLimitAnswers,
  jsonContentType,
  jsonText,
  nowSeconds,
  objectText,
  runs,
  wrongContentType,
  wrongTypeValue,
  type RawRequest,
  type Signer,
} from './support';
import { CLI_CONTEXT } from '../../src/shared/audit-context';

/**
 * Properties over the whole HTTP surface: any path (unicode, percent-encoded, broken escapes, dot
 * segments), any method, duplicate headers, and access tokens that are forged, tampered with or
 * belong to dead sessions. Never a 5xx, always the exact error body, nothing changed by a refusal.
 */

/** A token maker that fast-check prints by name rather than by source. */
const named = (name: string, make: () => string) => Object.assign(make, { [fc.toStringMethod]: () => name });

describe('property: paths, methods and headers', () => {
  let t: TestApp;
  let admin: string;
  let viewer: string;
  let target: string;
  let guard: DbGuard;
  let deadTokens: { name: string; token: string }[];

  beforeAll(async () => {
    t = await startTestApp();
    [admin, viewer] = await Promise.all([tokenForRole(t, 'admin'), tokenForRole(t, 'viewer')]);
    target = (await createApiKey(t, { role: 'viewer', description: 'property target' })).appname;

    // Access tokens whose signature is fine but whose session or principal is gone.
    const regenerated = await createApiKey(t, { role: 'admin' });
    const regeneratedToken = (await loginWithApiKey(t, regenerated)).access_token;
    await t.http().put(`${KEYS}/${regenerated.appname}/regen`).set(bearer(admin)).send({ roles: ['admin'] });
    const deleted = await createApiKey(t, { role: 'admin' });
    const deletedToken = (await loginWithApiKey(t, deleted)).access_token;
    await t.http().delete(`${KEYS}/${deleted.appname}`).set(bearer(admin));
    const disabledUser = await createUser(t, { role: 'admin' });
    const disabledToken = (await loginAs(t, disabledUser)).access_token;
    await t.services.users.disable(disabledUser.username, CLI_CONTEXT);
    const reused = await loginAs(t, await createUser(t, { role: 'admin' }));
    await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: reused.refresh_token });
    await t.http().post('/api/auth/bearer/refresh').type('form').send({ refresh_token: reused.refresh_token });
    const live = await loginAs(t, await createUser(t, { role: 'admin' }));
    deadTokens = [
      { name: 'token of a regenerated key', token: regeneratedToken },
      { name: 'token of a deleted key', token: deletedToken },
      { name: 'token of a disabled user', token: disabledToken },
      { name: 'token of a session revoked for refresh reuse', token: reused.access_token },
      { name: 'refresh token', token: live.refresh_token },
      { name: 'ID token', token: live.id_token },
    ];
    guard = new DbGuard(t.db);
  });
  afterAll(() => t.close());
  beforeEach(() => guard.reset());

  const expectAnswer = (req: RawRequest, allowed?: number[]) => exchange(t.baseUrl, guard, req, allowed);

  it(
    'when any method is sent to any path (unicode, percent-encoded, broken escapes, dot segments, long), then never a 5xx, every error is the exact body, and a refusal changes nothing',
    async () => {
      const word = fc.constantFrom(
        'api', 'v1', 'v2', 'api-keys', 'auth', 'token', 'bearer', 'refresh', '.well-known', 'jwks.json', 'healthz', 'readyz',
        'openapi.json', 'regen', 'API', 'Api-Keys', '..', '.', '', '%00', '%2F', '%2e%2e', '%E0%A4%A', '%', '%zz', '%C0%AF', '%FF',
        '%ED%A0%80', '%F0%9F%98%80', '~', '%20', ';', ':', '@', '*', 'null', 'undefined', '__proto__', 'constructor', 'prototype',
      );
      const segment = fc.oneof(
        word,
        fc.string({ unit: 'binary', maxLength: 20 }).map((s) => {
          try {
            return encodeURIComponent(s);
          } catch {
            return '%ED%B0%80';
          }
        }),
        fc.integer({ min: 100, max: 2000 }).map((n) => 'p'.repeat(n)),
      );
      const path = fc
        .tuple(
          fc.oneof(fc.constant(''), fc.constantFrom('/api/v1/api-keys', '/api/v1/auth/token', '/api/auth/bearer/token', '/api/auth/bearer/refresh', '/.well-known/jwks.json', '/healthz', '/api/v1')),
          fc.array(segment, { maxLength: 5 }),
          fc.constantFrom('', '/', '//'),
          fc.option(fc.constantFrom('?', '?a=1', '?limit=5&after=%00', '?__proto__[x]=1', '?%', '?a=%E0%A4%A', '?&&&=', `?${'q'.repeat(3000)}`), { nil: undefined }),
        )
        .map(([prefix, segs, tail, query]) => `${prefix}/${segs.join('/')}${segs.length ? tail : ''}${query ?? ''}`);
      const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE');
      const authorization = fc.constantFrom<(() => string) | undefined>(undefined, () => `Bearer ${admin}`, () => `Bearer ${viewer}`, () => 'Bearer x.y.z');
      const body = fc.option(fc.tuple(fc.oneof(jsonContentType, wrongContentType), jsonText), { nil: undefined });

      await fc.assert(
        fc.asyncProperty(method, path, authorization, body, async (m, p, auth, b) => {
          const headers: [string, string][] = [];
          if (auth) headers.push(['Authorization', auth()]);
          if (b) headers.push(['Content-Type', b[0]]);

          const res = await expectAnswer({ method: m, target: p, headers, body: b?.[1] });

          if (res.status === 401) expect(res.header('www-authenticate')).toMatch(/^Bearer/);
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when a request repeats Authorization, Content-Type or other headers, then never a 5xx, every error is the exact body, refusals change nothing, and two refused credentials are a 401',
    async () => {
      const credential = fc.oneof(
        fc.constantFrom<() => string>(() => `Bearer ${admin}`, () => `Bearer ${viewer}`),
        garbageAuthorization.map((g) => () => g),
      );
      const write = fc.constantFrom(
        () => ({ method: 'PUT', target: `${KEYS}/${target}` }),
        () => ({ method: 'PUT', target: `${KEYS}/${target}/regen` }),
        () => ({ method: 'POST', target: KEYS }),
        () => ({ method: 'GET', target: KEYS }),
      );
      const repeated = fc.array(
        fc.tuple(
          fc.constantFrom('X-Request-Id', 'Accept', 'Cookie', 'X-Forwarded-For', 'Accept-Encoding', 'User-Agent', 'Content-Encoding', 'Origin'),
          fc.constantFrom('a', 'b, c', 'identity', '*/*', '127.0.0.1', 'gzip', 'null', 'x'.repeat(500)),
        ),
        { maxLength: 4 },
      );

      await fc.assert(
        fc.asyncProperty(
          fc.array(credential, { minLength: 0, maxLength: 3 }),
          fc.array(fc.oneof(jsonContentType, wrongContentType), { minLength: 0, maxLength: 3 }),
          repeated,
          write,
          fc.oneof(fc.constant('{"description":"dup","roles":[]}'), fc.constant(`{"appname":"dup-${randomUUID().slice(0, 8)}","roles":[]}`), jsonText),
          async (credentials, types, others, w, body) => {
            const { method, target: path } = w();
            const auths = credentials.map((c) => c());
            const headers: [string, string][] = [
              ...auths.map((a): [string, string] => ['Authorization', a]),
              ...types.map((ct): [string, string] => ['Content-Type', ct]),
              ...others.flatMap(([n, v]): [string, string][] => [[n, v], [n, v]]),
            ];
            const onlyGarbage = auths.length > 0 && auths.every((a) => a !== `Bearer ${admin}` && a !== `Bearer ${viewer}`);

            const req: RawRequest = { method, target: path, headers, body: method === 'GET' ? undefined : body };
            const res = await expectAnswer(req);

            // Two 8 KB garbage tokens can take the headers over Node's limit, which answers before we do.
            if (onlyGarbage || auths.length === 0) expect(headerLimitAnswers(req, [401])).toContain(res.status);
            expect(res.headers['x-request-id']?.length ?? 1).toBe(1);
          },
        ),
        runs(250),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when an access token is forged, tampered with, signed by the service key with one bad claim, or belongs to a dead session, then every key operation is 401 and nothing changes',
    async () => {
      const { kid, privateKey } = await t.services.signingKeys.signingKey();
      const publicKey = createPublicKey(privateKey);
      const real = claimsOf(admin);
      const esHeader: [string, unknown][] = [['alg', 'ES256'], ['typ', 'JWT'], ['kid', kid]];
      const serviceKey: Signer = { kind: 'asymmetric', hash: 'sha256', key: privateKey, ec: true };
      const set = <T>(entries: [string, T][], name: string, value: T | undefined): [string, T][] =>
        entries.filter(([k]) => k !== name).concat(value === undefined ? [] : [[name, value]]);
      const sign = (header: [string, unknown][], claims: [string, unknown][], signer: Signer = serviceKey) =>
        buildJwt(objectText(header), objectText(claims), signer);
      const claimsWith = (name: string, value: unknown) => set(Object.entries(real), name, value);
      const differs = (name: string) => (v: unknown) => JSON.stringify(v) !== JSON.stringify(real[name]);

      const token = fc.oneof(
        fc.constantFrom('Refresh', 'ID', 'bearer', 'BEARER', '', 5, null, undefined).map((typ) => named(`typ ${String(typ)}`, () => sign(esHeader, claimsWith('typ', typ)))),
        fc.oneof(fc.string({ maxLength: 20 }), wrongTypeValue, fc.constant(undefined)).filter(differs('iss')).map((iss) => named(`iss ${JSON.stringify(iss)}`, () => sign(esHeader, claimsWith('iss', iss)))),
        fc.oneof(fc.string({ maxLength: 20 }), wrongTypeValue, fc.constant(undefined), fc.constant(['other'])).filter(differs('aud')).map((aud) => named(`aud ${JSON.stringify(aud)}`, () => sign(esHeader, claimsWith('aud', aud)))),
        fc.integer({ min: 2, max: 10_000_000 }).map((ago) => named(`expired ${ago} s ago`, () => sign(esHeader, claimsWith('exp', nowSeconds() - ago)))),
        fc.constantFrom<unknown>(undefined, 'later', null, {}).map((exp) => named(`exp ${JSON.stringify(exp)}`, () => sign(esHeader, claimsWith('exp', exp)))),
        fc.integer({ min: 5, max: 100_000 }).map((ahead) => named(`nbf in ${ahead} s`, () => sign(esHeader, claimsWith('nbf', nowSeconds() + ahead)))),
        fc.oneof(fc.constant(randomUUID()), fc.string({ maxLength: 12 }), wrongTypeValue, fc.constant(undefined)).filter(differs('sub')).map((sub) => named(`sub ${JSON.stringify(sub)}`, () => sign(esHeader, claimsWith('sub', sub)))),
        fc.constantFrom<unknown>(randomUUID(), undefined, 5, null, {}, []).map((sid) => named(`sid ${JSON.stringify(sid)}`, () => sign(esHeader, claimsWith('sid', sid)))),
        fc.constantFrom<unknown>(undefined, 5, null, {}).map((jti) => named(`jti ${JSON.stringify(jti)}`, () => sign(esHeader, claimsWith('jti', jti)))),
        fc.oneof(fc.string({ maxLength: 20 }), wrongTypeValue, fc.constant(undefined)).filter((k) => k !== kid).map((k) => named(`kid ${JSON.stringify(k)}`, () => sign(set(esHeader, 'kid', k), Object.entries(real)))),
        fc.constantFrom('ES384', 'ES512', 'RS256', 'PS256', 'HS256', 'none', 'es256', '').map((alg) => named(`header alg ${alg}`, () => sign(set(esHeader, 'alg', alg), Object.entries(real)))),
        fc.constant(named('alg none, unsigned', () => sign([['alg', 'none'], ['kid', kid]], Object.entries(real), { kind: 'none' }))),
        fc
          .constantFrom<[string, string | Buffer]>(
            ['public PEM', publicKey.export({ format: 'pem', type: 'spki' }).toString()],
            ['public JWK', JSON.stringify(publicKey.export({ format: 'jwk' }))],
            ['kid', kid],
            ['empty', ''],
          )
          .map(([what, secret]) => named(`HS256 keyed with the ${what}`, () => sign([['alg', 'HS256'], ['kid', kid]], Object.entries(real), { kind: 'hmac', hash: 'sha256', key: secret }))),
        fc
          .array(fc.tuple(fc.constantFrom('roles', 'scope', 'principal_type', 'preferred_username', '__proto__'), fc.oneof(wrongTypeValue, fc.constant(['admin']))), { minLength: 1, maxLength: 2 })
          .map((changes) =>
            named(`claims ${JSON.stringify(changes)} swapped in under the real signature`, () => {
              const [h, , sig] = admin.split('.');
              const claims = changes.reduce((acc, [k, v]) => set(acc, k, v), Object.entries(real));
              return `${h}.${Buffer.from(objectText(claims)).toString('base64url')}.${sig}`;
            }),
          ),
        fc.constantFrom(0, 1, 2, 3, 4, 5).map((i) => named(`dead token #${i}`, () => deadTokens[i]!.token)),
      );
      const operation = fc.constantFrom(
        { method: 'GET', path: () => KEYS, body: undefined },
        { method: 'POST', path: () => KEYS, body: `{"appname":"forged-${randomUUID().slice(0, 8)}","roles":["admin"]}` },
        { method: 'GET', path: () => `${KEYS}/${target}`, body: undefined },
        { method: 'PUT', path: () => `${KEYS}/${target}`, body: '{"description":"taken over","roles":["admin"]}' },
        { method: 'PUT', path: () => `${KEYS}/${target}/regen`, body: '{"roles":["admin"]}' },
        { method: 'DELETE', path: () => `${KEYS}/${target}`, body: undefined },
      );

      await fc.assert(
        fc.asyncProperty(token, operation, async (make, op) => {
          const headers: [string, string][] = [['Authorization', `Bearer ${make()}`]];
          if (op.body) headers.push(['Content-Type', 'application/json']);

          const res = await expectAnswer({ method: op.method, target: op.path(), headers, body: op.body }, [401]);

          expect(res.header('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when an access token signed with the service key carries a session id that is not a UUID, then 401, never a 5xx',
    async () => {
      const { kid, privateKey } = await t.services.signingKeys.signingKey();
      const real = claimsOf(admin);
      const notUuid = fc
        .oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('x', "'; DROP TABLE sessions; --", '\u0000', '00000000-0000-0000-0000-00000000000g'))
        .filter((v) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v));

      await fc.assert(
        fc.asyncProperty(notUuid, async (sid) => {
          const token = buildJwt(objectText([['alg', 'ES256'], ['typ', 'JWT'], ['kid', kid]]), objectText(Object.entries({ ...real, sid })), {
            kind: 'asymmetric',
            hash: 'sha256',
            key: privateKey,
            ec: true,
          });

          await expectAnswer({ method: 'GET', target: KEYS, headers: [['Authorization', `Bearer ${token}`]] }, [401]);
        }),
        runs(100),
      );
    },
    PROPERTY_TIMEOUT,
  );
});
