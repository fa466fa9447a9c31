import { brotliDecompressSync } from 'node:zlib';
import { parse as parseQuery } from 'node:querystring';
import fc from 'fast-check';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, randomName, tokenForRole } from '../helpers/factories';
import {
  APPNAME,
  DbGuard,
  KEYS,
  PROPERTY_TIMEOUT,
  anyKey,
  badAppname,
  badDescription,
  badRoles,
  brokenJsonText,
  garbageAuthorization,
  goodDescription,
  goodRoles,
  hugeJsonText,
  isValidCreateBody,
  isValidUpdateBody,
  jsonContentType,
  jsonText,
  objectText,
  parseJsonBody,
  exchange,
  runs,
  wrongContentType,
  wrongTypeValue,
  type RawRequest,
} from './support';

function isBrotli(text: string): boolean {
  try {
    brotliDecompressSync(Buffer.from(text));
    return true;
  } catch {
    return false;
  }
}

/**
 * Properties of the six API key operations: whatever the body, path, query or content type, the
 * answer is never a 5xx, every error is exactly {status, name, message}, the status is the one the
 * contract gives, and a rejected request leaves every table as it was.
 */

const BODY_LIMIT = 64 * 1024;

/** A create body: valid entries with one mutation (a bad value, a missing or extra or repeated field). */
const mutatedCreateBody = fc
  .record({
    appname: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,40}$/),
    description: goodDescription,
    roles: goodRoles,
    withDescription: fc.boolean(),
    mutation: fc.oneof(
      badAppname.map((value) => ({ kind: 'set' as const, key: 'appname', value })),
      badDescription.map((value) => ({ kind: 'set' as const, key: 'description', value })),
      badRoles.map((value) => ({ kind: 'set' as const, key: 'roles', value })),
      fc.tuple(anyKey, fc.oneof(wrongTypeValue, fc.string())).map(([key, value]) => ({ kind: 'extra' as const, key, value })),
      fc.constantFrom('appname', 'roles', 'description').map((key) => ({ kind: 'drop' as const, key, value: undefined })),
      fc
        .tuple(fc.constantFrom('appname', 'roles', 'description'), fc.oneof(badAppname, badRoles, badDescription), fc.boolean())
        .map(([key, value, badLast]) => ({ kind: badLast ? ('repeatBadLast' as const) : ('repeatBadFirst' as const), key, value })),
    ),
  })
  .map(({ appname, description, roles, withDescription, mutation }) => {
    let entries: [string, unknown][] = [
      ['appname', appname],
      ...(withDescription ? [['description', description] as [string, unknown]] : []),
      ['roles', roles],
    ];
    const { kind, key, value } = mutation;
    if (kind === 'set') entries = entries.filter(([k]) => k !== key).concat([[key, value]]);
    if (kind === 'extra') entries.push([key, value]);
    if (kind === 'drop') entries = entries.filter(([k]) => k !== key);
    if (kind === 'repeatBadLast') entries.push([key, value]);
    if (kind === 'repeatBadFirst') entries.unshift([key, value]);
    return objectText(entries);
  });

/** An update/regen body: a subset of the valid fields with one mutation, or nothing at all. */
const mutatedUpdateBody = fc
  .record({
    description: fc.option(goodDescription, { nil: undefined }),
    roles: fc.option(goodRoles, { nil: undefined }),
    mutation: fc.option(
      fc.oneof(
        badDescription.map((value) => ['description', value] as [string, unknown]),
        badRoles.map((value) => ['roles', value] as [string, unknown]),
        fc.tuple(fc.oneof(anyKey, fc.constantFrom('appname', 'appkey', 'last_login', 'last_ip')), fc.oneof(wrongTypeValue, fc.string())),
      ),
      { nil: undefined },
    ),
  })
  .map(({ description, roles, mutation }) => {
    const entries: [string, unknown][] = [];
    if (description !== undefined) entries.push(['description', description]);
    if (roles !== undefined) entries.push(['roles', roles]);
    if (mutation) entries.push(mutation);
    return objectText(entries);
  });

describe('property: API key routes', () => {
  let t: TestApp;
  let admin: string;
  let editor: string;
  let viewer: string;
  let noRole: string;
  let target: string;
  let adminKey: string;
  let guard: DbGuard;

  beforeAll(async () => {
    t = await startTestApp();
    [admin, editor, viewer, noRole] = await Promise.all([
      tokenForRole(t, 'admin'),
      tokenForRole(t, 'editor'),
      tokenForRole(t, 'viewer'),
      tokenForRole(t, null),
    ]);
    target = (await createApiKey(t, { role: 'viewer', description: 'property target' })).appname;
    adminKey = (await createApiKey(t, { role: 'admin', description: 'admin key' })).appname;
    guard = new DbGuard(t.db);
  });
  afterAll(() => t.close());
  beforeEach(() => guard.reset());

  const auth = (token: string): [string, string] => ['Authorization', `Bearer ${token}`];

  /** Sends, checks well-formedness and the allowed statuses, then that a rejection changed nothing. */
  const expectAnswer = (req: RawRequest, allowed: number[]) => exchange(t.baseUrl, guard, req, allowed);

  async function existingAppnames(): Promise<Set<string>> {
    const { rows } = await t.db.query<{ appname: string }>('SELECT appname FROM api_keys');
    return new Set(rows.map((r) => r.appname));
  }

  it(
    'when a key route gets no or a garbage Authorization header, then 401 whatever the path, method, content type or body, and nothing changes',
    async () => {
      const path = fc.oneof(
        fc.constant(KEYS),
        fc.constant(`${KEYS}/`),
        fc.constant(`${KEYS}/${target}`),
        fc.constant(`${KEYS}/${target}/regen`),
        fc.constantFrom('%00', '%2F', '%E0%A4%A', '..', '%', 'a'.repeat(3000), 'x/y/z', '%zz', `${target}%2Fregen`).map((s) => `${KEYS}/${s}`),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map((s) => `${KEYS}/${encodeURIComponent(s)}`),
      );
      const body = fc.option(fc.oneof(jsonText, brokenJsonText, hugeJsonText, mutatedCreateBody), { nil: undefined });

      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
          path,
          fc.option(garbageAuthorization, { nil: undefined }),
          fc.option(fc.oneof(jsonContentType, wrongContentType), { nil: undefined }),
          body,
          fc.boolean(),
          async (method, target_, authorization, contentType, payload, chunked) => {
            const headers: [string, string][] = [];
            if (authorization !== undefined) headers.push(['Authorization', authorization]);
            if (contentType !== undefined) headers.push(['Content-Type', contentType]);

            await expectAnswer({ method, target: target_, headers, body: payload, chunked }, [401]);
          },
        ),
        runs(200),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when an admin creates with any JSON body, then 400 unless it is a valid create config, and a 400 creates nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(jsonText, mutatedCreateBody), fc.boolean(), async (body, chunked) => {
          const parsed = parseJsonBody(body);
          const expected = Buffer.byteLength(body) > BODY_LIMIT ? [413] : isValidCreateBody(parsed) ? [201, 409] : [400];

          await expectAnswer({ method: 'POST', target: KEYS, headers: [auth(admin), ['Content-Type', 'application/json']], body, chunked }, expected);
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when update or regen gets any JSON body, then 400 for an invalid one, else 200 for an admin and 403 for a viewer or an editor on an admin key; refusals change nothing',
    async () => {
      const caller = fc.constantFrom(
        { who: 'admin', key: () => target, token: () => admin, allowed: 200 },
        { who: 'viewer', key: () => target, token: () => viewer, allowed: 403 },
        { who: 'no role', key: () => target, token: () => noRole, allowed: 403 },
        { who: 'editor on an admin key', key: () => adminKey, token: () => editor, allowed: 403 },
      );

      await fc.assert(
        fc.asyncProperty(caller, fc.boolean(), fc.oneof(jsonText, mutatedUpdateBody), async (c, regen, body) => {
          const expected = Buffer.byteLength(body) > BODY_LIMIT ? [413] : isValidUpdateBody(parseJsonBody(body)) ? [c.allowed] : [400];
          const path = `${KEYS}/${c.key()}${regen ? '/regen' : ''}`;

          await expectAnswer({ method: 'PUT', target: path, headers: [auth(c.token()), ['Content-Type', 'application/json']], body }, expected);
        }),
        runs(250),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when the list gets any query string, then 200 with at most limit records for a valid query (limit 1-1000, after an appname, prefix 1-64 of a-z 0-9 . _ -, nothing else) and 400 otherwise',
    async () => {
      const name = fc.oneof(fc.constantFrom('limit', 'after', 'prefix', 'LIMIT', 'limit[]', 'prefix[]', 'offset', 'page', '', '%6Cimit'), anyKey.map(encodeURIComponent));
      const value = fc.oneof(
        fc.integer({ min: -5, max: 1100 }).map(String),
        fc.constantFrom('', '0', '1', '1000', '1001', '0100', '1e2', '+5', '%205', '5%20', '5.0', '0x10', '99999', '%31', '%00', '%', '%E0%A4%A', 'abc', 'a.b', '_', 'a_', '.', '-', 'A'),
        fc.stringMatching(APPNAME),
        fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent),
        fc.constant('a'.repeat(2000)),
      );
      const query = fc.array(fc.tuple(name, fc.option(value, { nil: undefined })), { maxLength: 5 }).map((pairs) =>
        pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&'),
      );

      await fc.assert(
        fc.asyncProperty(query, fc.constantFrom(admin, viewer, editor), async (qs, token) => {
          const parsed = parseQuery(qs);
          const keys = Object.keys(parsed);
          const limit = parsed.limit;
          const after = parsed.after;
          const prefix = parsed.prefix;
          const valid =
            keys.every((k) => k === 'limit' || k === 'after' || k === 'prefix') &&
            (prefix === undefined || (typeof prefix === 'string' && /^[a-z0-9._-]{1,64}$/.test(prefix))) &&
            (limit === undefined || (typeof limit === 'string' && /^\d{1,4}$/.test(limit) && Number(limit) >= 1 && Number(limit) <= 1000)) &&
            (after === undefined || (typeof after === 'string' && APPNAME.test(after)));

          const res = await expectAnswer({ method: 'GET', target: `${KEYS}?${qs}`, headers: [auth(token)] }, [valid ? 200 : 400]);

          if (res.status === 200) {
            const body = JSON.parse(res.text) as { meta: { code: number; count: number }; data: { appname: string }[] };
            expect(body.meta).toEqual({ code: 200, count: body.data.length });
            expect(body.data.length).toBeLessThanOrEqual(limit === undefined ? 1000 : Number(limit));
            if (typeof after === 'string') for (const k of body.data) expect(Buffer.compare(Buffer.from(k.appname), Buffer.from(after))).toBe(1);
            if (typeof prefix === 'string') for (const k of body.data) expect(k.appname.startsWith(prefix)).toBe(true);
          }
        }),
        runs(200),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when get, update, regen or delete names any appname in the path, then 400 for an invalid (or badly encoded) name and 404 for an unknown valid one; nothing changes',
    async () => {
      const fragment = fc.constantFrom(
        '%00', '%2F', '%2f', '%E0%A4%A', '%', '%zz', '..', '.', '%2e%2e', '%252F', 'a', 'Z', '0', '-', '_', '~', '%C0%AF', '%FF',
        '%u0041', "'", '!', '$', '(', ')', '*', '+', ',', ';', '=', ':', '@', '%20', '%61', '%5C', '%0A', '%F0%9F%98%80', '%ED%A0%80',
      );
      const segment = fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }).map((s) => {
          try {
            return encodeURIComponent(s);
          } catch {
            return '%ED%A0%80'; // a lone surrogate, as its UTF-8-style bytes
          }
        }),
        fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,63}$/),
        fc
          .stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/)
          .chain((s) => fc.array(fc.boolean(), { minLength: s.length, maxLength: s.length }).map((enc) => [...s].map((c, i) => (enc[i] ? `%${c.charCodeAt(0).toString(16)}` : c)).join(''))),
        fc.array(fragment, { minLength: 1, maxLength: 10 }).map((xs) => xs.join('')),
        fc.integer({ min: 60, max: 6000 }).map((n) => 'a'.repeat(n)),
      );
      const operation = fc.constantFrom(
        { method: 'GET', suffix: '', body: undefined },
        { method: 'DELETE', suffix: '', body: undefined },
        { method: 'PUT', suffix: '', body: '{"description":"changed","roles":["admin"]}' },
        { method: 'PUT', suffix: '/regen', body: '{"description":"changed","roles":[]}' },
      );

      await fc.assert(
        fc.asyncProperty(segment, operation, async (seg, op) => {
          let decoded: string | undefined;
          try {
            decoded = decodeURIComponent(seg);
          } catch {
            decoded = undefined;
          }
          // Keys created by the other properties (a valid create may name "z") are not unknown.
          fc.pre(decoded === undefined || !(await existingAppnames()).has(decoded));
          const expected = decoded !== undefined && APPNAME.test(decoded) ? [404] : [400];
          const headers: [string, string][] = [auth(admin)];
          if (op.body) headers.push(['Content-Type', 'application/json']);

          await expectAnswer({ method: op.method, target: `${KEYS}/${seg}${op.suffix}`, headers, body: op.body }, expected);
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when an authenticated write carries a body under another content type, then 415; over 64 KiB of JSON, 413; malformed JSON, 400; nothing changes',
    async () => {
      const write = fc.constantFrom(
        () => ({ method: 'POST', target: KEYS }),
        () => ({ method: 'PUT', target: `${KEYS}/${target}` }),
        () => ({ method: 'PUT', target: `${KEYS}/${target}/regen` }),
      );
      const content = fc.oneof(
        fc.tuple(wrongContentType, fc.oneof(jsonText, mutatedCreateBody, hugeJsonText).filter((b) => b.length > 0)).map(([type, body]) => ({ type, body, status: 415 })),
        fc.tuple(jsonContentType, hugeJsonText).map(([type, body]) => ({ type, body, status: 413 })),
        fc
          .tuple(jsonContentType, brokenJsonText.filter((b) => b.length > 0 && parseJsonBody(b) === undefined))
          .map(([type, body]) => ({ type, body, status: 400 })),
        fc
          .tuple(fc.constantFrom('gzip', 'deflate', 'br', 'x-unknown', 'identity, gzip'), jsonText)
          // Some short texts happen to be valid brotli streams (e.g. "30...0" decodes to nothing): not a mislabelled body.
          .filter(([encoding, body]) => encoding !== 'br' || !isBrotli(body))
          .map(([encoding, body]) => ({ type: 'application/json', body, encoding, status: 0 })),
      );

      await fc.assert(
        fc.asyncProperty(write, content, fc.boolean(), fc.constantFrom(admin, editor), async (w, c, chunked, token) => {
          const { method, target: path } = w();
          const headers: [string, string][] = [auth(token)];
          if (c.type !== undefined) headers.push(['Content-Type', c.type]);
          if ('encoding' in c) headers.push(['Content-Encoding', c.encoding]);

          // A body that is not what its Content-Encoding says is a client fault: 400 or 415.
          await expectAnswer({ method, target: path, headers, body: c.body, chunked }, c.status === 0 ? [400, 415] : [c.status]);
        }),
        runs(200),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when a key path is called with a method it does not serve, then 405 with an Allow header',
    async () => {
      const route = fc.constantFrom(
        { path: () => KEYS, methods: ['PUT', 'DELETE', 'PATCH', 'TRACE', 'PROPFIND'], allow: 'GET, POST' },
        { path: () => `${KEYS}/${target}`, methods: ['POST', 'PATCH', 'TRACE', 'OPTIONS'], allow: 'GET, PUT, DELETE' },
        { path: () => `${KEYS}/${randomName('none')}`, methods: ['POST', 'PATCH'], allow: 'GET, PUT, DELETE' },
        { path: () => `${KEYS}/${target}/regen`, methods: ['GET', 'POST', 'DELETE', 'PATCH'], allow: 'PUT' },
      );

      await fc.assert(
        fc.asyncProperty(route, fc.nat(), fc.option(jsonText, { nil: undefined }), async (r, i, body) => {
          const method = r.methods[i % r.methods.length]!;
          const headers: [string, string][] = [auth(admin), ['Content-Type', 'application/json']];

          const res = await expectAnswer({ method, target: r.path(), headers, body }, [405]);

          expect(res.header('allow')).toBe(r.allow);
        }),
        runs(100),
      );
    },
    PROPERTY_TIMEOUT,
  );
});
