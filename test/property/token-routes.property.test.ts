import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import fc from 'fast-check';
import { startTestApp, type TestApp } from '../helpers/app';
import { bearer, createApiKey, createUser, loginAs, tokenForRole, type TestApiKey } from '../helpers/factories';
import { claimsOf, signRequestToken } from '../helpers/tokens';
import {
  DbGuard,
  KEYS,
  PROPERTY_TIMEOUT,
  anyKey,
  brokenJsonText,
  buildJwt,
  dangerousKey,
  exchange,
  headerLimitAnswers,
  hugeJsonText,
  jsonContentType,
  jsonText,
  nowSeconds,
  objectText,
  parseJsonBody,
  runs,
  send,
  wrongContentType,
  wrongTypeValue,
  type RawRequest,
  type Signer,
} from './support';

/**
 * Properties of the three token routes: random bodies, request tokens with one defect each, JWTs
 * with random headers, claims and signatures, and truncated tokens. Never a 5xx, always the exact
 * error body, and no rejected request records a jti, opens, rotates or revokes a session, or
 * touches last_login.
 */

const API_KEY_TOKEN = '/api/v1/auth/token';
const PASSWORD_TOKEN = '/api/auth/bearer/token';
const REFRESH_TOKEN = '/api/auth/bearer/refresh';
const BODY_LIMIT = 64 * 1024;
const FORM = 'application/x-www-form-urlencoded';

type Route = typeof API_KEY_TOKEN | typeof PASSWORD_TOKEN | typeof REFRESH_TOKEN;

const isString = (v: unknown): v is string => typeof v === 'string';

/** A NUL or an unpaired surrogate in any string of `v`, keys aside: a 400 on every route (contract, "Bad input stays 400"). */
function holdsUnstorableString(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000') || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(v);
  if (v !== null && typeof v === 'object') return Object.values(v).some(holdsUnstorableString);
  return false;
}

/**
 * The contract's body rules per token route: which fields, required or not, each a string; any string
 * is a credential to judge (401), except one that holds NUL or an unpaired surrogate (no credential
 * at all) and a password bcrypt cannot check (over 72 bytes): 400. Valid bodies here still carry
 * wrong credentials.
 */
function isValidTokenBody(route: Route, v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  if (holdsUnstorableString(v)) return false;
  const body = v as Record<string, unknown>;
  const keys = Object.keys(body);
  const only = (allowed: string[]) => keys.every((k) => allowed.includes(k));
  if (route === API_KEY_TOKEN) return only(['jwt']) && isString(body.jwt);
  if (route === PASSWORD_TOKEN) {
    return (
      only(['username', 'password', 'grant_type']) &&
      isString(body.username) &&
      isString(body.password) &&
      Buffer.byteLength(body.password) <= 72 &&
      (!keys.includes('grant_type') || body.grant_type === 'password')
    );
  }
  return only(['refresh_token', 'grant_type']) && isString(body.refresh_token) && (!keys.includes('grant_type') || body.grant_type === 'refresh_token');
}

/**
 * A form body's fields as the service's parser (body-parser's qs) sees them: a field with no name is
 * dropped, and so is `__proto__` (qs never lets a field touch an object's prototype).
 */
function formFields(body: string): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...parseQuery(body) };
  delete fields[''];
  delete fields['__proto__'];
  return fields;
}

/** A token maker that fast-check prints by name rather than by source. */
const named = (name: string, make: () => string) => Object.assign(make, { [fc.toStringMethod]: () => name });

const routeArb = fc.constantFrom<Route>(API_KEY_TOKEN, PASSWORD_TOKEN, REFRESH_TOKEN);

const tokenFieldValue = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
  fc.constantFrom('', '\u0000', 'a\u0000b', 'password', 'refresh_token', 'x.y.z', 'eyJhbGciOiJub25lIn0.e30.', 'p'.repeat(73), '\u00e9'.repeat(37)),
  fc.integer({ min: 73, max: 200 }).map((n) => 'q'.repeat(n)),
);

/** Entries of a token body: known fields with good or bad values, plus strangers. */
const tokenEntries = fc.array(
  fc.tuple(
    fc.oneof(fc.constantFrom('jwt', 'username', 'password', 'refresh_token', 'grant_type'), dangerousKey, anyKey),
    fc.oneof({ weight: 3, arbitrary: tokenFieldValue }, { weight: 1, arbitrary: wrongTypeValue }),
  ),
  { maxLength: 5 },
);

/** The entries as a form body, strings only; non-strings go as their JSON text. */
const formText = (entries: [string, unknown][]) =>
  entries
    .map(([k, v]) => {
      const value = typeof v === 'string' ? v : JSON.stringify(v);
      try {
        return `${encodeURIComponent(k)}=${encodeURIComponent(value)}`;
      } catch {
        return `${encodeURIComponent(k.replace(/[\ud800-\udfff]/g, ''))}=${encodeURIComponent(value.replace(/[\ud800-\udfff]/g, ''))}`;
      }
    })
    .join('&');

describe('property: token routes', () => {
  let t: TestApp;
  let key: TestApiKey;
  let oldAppkey: TestApiKey;
  let deletedKey: TestApiKey;
  let usedJti: string;
  let liveRefresh: string;
  let liveAccess: string;
  let liveId: string;
  let revokedRefresh: string;
  let admin: string;
  let guard: DbGuard;
  let rsaKey: KeyObject;
  let ecKey: KeyObject;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
    key = await createApiKey(t, { role: 'viewer' });

    const regenerated = await createApiKey(t, { role: 'viewer' });
    const regen = await t.http().put(`${KEYS}/${regenerated.appname}/regen`).set(bearer(admin)).send({ roles: ['viewer'] });
    if (regen.status !== 200) throw new Error(`regen failed: ${regen.status}`);
    oldAppkey = regenerated;

    deletedKey = await createApiKey(t, { role: 'viewer' });
    const del = await t.http().delete(`${KEYS}/${deletedKey.appname}`).set(bearer(admin));
    if (del.status !== 204) throw new Error(`delete failed: ${del.status}`);

    usedJti = randomUUID();
    const used = await t.http().post(API_KEY_TOKEN).send({ jwt: signRequestToken(key.appname, key.appkey, { claims: { jti: usedJti } }) });
    if (used.status !== 200) throw new Error(`exchange failed: ${used.status}`);

    const user = await createUser(t, { role: 'editor' });
    const live = await loginAs(t, user);
    [liveRefresh, liveAccess, liveId] = [live.refresh_token, live.access_token, live.id_token];

    // A session revoked by refresh-token reuse: presenting its old token again changes nothing more.
    const doomed = await loginAs(t, user);
    await t.http().post(REFRESH_TOKEN).type('form').send({ refresh_token: doomed.refresh_token });
    const reuse = await t.http().post(REFRESH_TOKEN).type('form').send({ refresh_token: doomed.refresh_token });
    if (reuse.status !== 401) throw new Error(`reuse was not refused: ${reuse.status}`);
    revokedRefresh = doomed.refresh_token;

    rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    ecKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    guard = new DbGuard(t.db);
  });
  afterAll(() => t.close());
  beforeEach(() => guard.reset());

  const expectAnswer = (req: RawRequest, allowed: number[]) => exchange(t.baseUrl, guard, req, allowed);
  /** A refused token's 401, unless Node's own limits come first: headers near or over 16 KiB, a body over 64 KiB (413). */
  const refusedTokenAnswers = (req: RawRequest): number[] =>
    headerLimitAnswers(req, req.body !== undefined && Buffer.byteLength(req.body) > 64 * 1024 ? [413] : [401]);
  const post = (route: string, jwtField: string, token: string, asForm: boolean): RawRequest =>
    asForm
      ? { method: 'POST', target: route, headers: [['Content-Type', FORM]], body: `${jwtField}=${encodeURIComponent(token)}` }
      : { method: 'POST', target: route, headers: [['Content-Type', 'application/json']], body: JSON.stringify({ [jwtField]: token }) };

  it(
    'when a token route gets any body, then 415 for another content type, 413 over 64 KiB (and only then), 400 for a body that breaks the field rules and 401 otherwise; nothing changes',
    async () => {
      const request = fc.oneof(
        fc.tuple(fc.constantFrom('json', 'form'), tokenEntries, fc.boolean()).map(([as, entries, dupe]) => {
          const all: [string, unknown][] = dupe && entries.length > 0 ? [...entries, entries[0]!] : entries;
          return as === 'json'
            ? { type: 'application/json', body: objectText(all), status: undefined }
            : { type: FORM, body: formText(all), status: undefined };
        }),
        jsonText.map((body) => ({ type: 'application/json', body, status: undefined })),
        fc.tuple(jsonContentType, brokenJsonText.filter((b) => b.length > 0 && parseJsonBody(b) === undefined)).map(([type, body]) => ({ type, body, status: 400 })),
        fc
          .tuple(wrongContentType.filter((ct) => ct !== FORM), fc.oneof(jsonText, tokenEntries.map(formText)).filter((b) => b.length > 0))
          .map(([type, body]) => ({ type, body, status: 415 })),
        fc.tuple(fc.constantFrom('application/json', FORM), hugeJsonText).map(([type, body]) => ({ type, body, status: 413 })),
        // Many fields in a small body, distinct, repeated or empty: a 400, not a 413 (that is for size alone).
        fc.integer({ min: 101, max: 3000 }).map((n) => ({ type: FORM, body: Array.from({ length: n }, (_, i) => `p${i}=1`).join('&'), status: 400 })),
        fc.tuple(fc.constantFrom('a=&', '&', 'jwt=x&'), fc.integer({ min: 1001, max: 10_000 })).map(([field, n]) => ({ type: FORM, body: field.repeat(n), status: 400 })),
        fc.constantFrom('application/json', FORM, undefined).map((type) => ({ type, body: undefined, status: 400 })),
      );

      await fc.assert(
        fc.asyncProperty(routeArb, request, fc.boolean(), async (route, r, chunked) => {
          let expected = r.status;
          if (expected === undefined) {
            // As the service receives it: sent as UTF-8, a raw unpaired surrogate in the text arrives as U+FFFD.
            const body = Buffer.from(r.body ?? '', 'utf8').toString('utf8');
            const parsed = r.type === FORM ? formFields(body) : parseJsonBody(body);
            expected = Buffer.byteLength(body) > BODY_LIMIT ? 413 : isValidTokenBody(route, parsed) ? 401 : 400;
          }
          const headers: [string, string][] = r.type === undefined ? [] : [['Content-Type', r.type]];

          await expectAnswer({ method: 'POST', target: route, headers, body: r.body, chunked }, [expected]);
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT,
  );

  /** A request token for `key`, valid except for the one defect applied to its header, claims or signature. */
  const defectiveRequestToken = () => {
    const junkClaims = fc.array(
      fc.tuple(
        fc.oneof(dangerousKey, fc.string({ maxLength: 8 })).filter((k) => !['iss', 'sub', 'aud', 'iat', 'exp', 'jti', 'nbf'].includes(k)),
        fc.oneof(wrongTypeValue, fc.string({ unit: 'binary', maxLength: 10 })),
      ).map(([k, v]): [string, unknown] => [k, v]),
      { maxLength: 3 },
    );
    const junkHeader = fc.array(
      fc.tuple(
        fc.oneof(fc.constantFrom('kid', 'typ', 'cty', 'jku', 'x5u', 'crit', 'b64'), dangerousKey, fc.string({ maxLength: 6 })).filter((k) => k !== 'alg'),
        fc.oneof(wrongTypeValue, fc.string({ unit: 'binary', maxLength: 10 })),
      ).map(([k, v]): [string, unknown] => [k, v]),
      { maxLength: 3 },
    );
    const notIss = (v: unknown) => v !== key.appname;
    type Claims = [string, unknown][];
    type Token = { header: [string, unknown][]; claims: Claims; signer: () => Signer; post?: (token: string) => string };
    const set = (claims: Claims, name: string, value: unknown): Claims => claims.filter(([k]) => k !== name).concat(value === undefined ? [] : [[name, value]]);
    const hs = (alg: 'HS256' | 'HS384' | 'HS512', secret = key.appkey): Signer => ({ kind: 'hmac', hash: `sha${alg.slice(2)}` as 'sha256', key: secret });
    const d = fc.integer({ min: 0, max: 100_000 });

    const defect = fc.oneof(
      fc.constantFrom('none', 'None', 'NONE', '').map((alg) => ({ name: `alg ${alg}`, apply: (tk: Token) => ({ ...tk, header: [['alg', alg]], signer: () => ({ kind: 'none' }) }) as Token })),
      fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s !== key.appkey).map((secret) => ({ name: 'wrong secret', apply: (tk: Token) => ({ ...tk, signer: () => hs('HS256', secret) }) })),
      fc.constant({ name: 'appkey before regen', apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, 'iss', oldAppkey.appname), signer: () => hs('HS256', oldAppkey.appkey) }) }),
      fc.constant({ name: 'deleted key', apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, 'iss', deletedKey.appname), signer: () => hs('HS256', deletedKey.appkey) }) }),
      fc
        .oneof(
          fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,30}$/),
          fc.string({ unit: 'binary', maxLength: 30 }),
          fc.constantFrom<unknown>('\u0000', `${'a'}\u0000`, '\ud800', 'A'.repeat(5000), ''),
          wrongTypeValue,
          fc.constant(undefined),
        )
        .filter(notIss)
        .map((iss) => ({ name: `iss ${JSON.stringify(iss)}`, apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, 'iss', iss) }) })),
      fc
        .oneof(fc.constantFrom<unknown>(undefined, '', 5, null, {}, [], true, ['a']), fc.integer({ min: 257, max: 2000 }).map((n) => 'j'.repeat(n)))
        .map((jti) => ({ name: `jti ${JSON.stringify(jti)?.slice(0, 20)}`, apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, 'jti', jti) }) })),
      fc.constant({ name: 'replayed jti', apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, 'jti', usedJti) }) }),
      fc
        .oneof(fc.string({ unit: 'binary', maxLength: 20 }), wrongTypeValue)
        .filter(notIss)
        .map((sub) => ({ name: `sub ${JSON.stringify(sub)}`, apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, 'sub', sub) }) })),
      fc
        .oneof(fc.string({ maxLength: 20 }), wrongTypeValue, fc.constant([t.config.issuer, 'other']), fc.constant(['other']))
        .filter((aud) => aud !== t.config.issuer && JSON.stringify(aud) !== JSON.stringify([t.config.issuer]))
        .map((aud) => ({ name: `aud ${JSON.stringify(aud)}`, apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, 'aud', aud) }) })),
      fc.tuple(d, fc.integer({ min: 2, max: 299 })).map(([ago, life]) => ({
        name: 'expired',
        apply: (tk: Token) => ({ ...tk, claims: set(set(tk.claims, 'exp', nowSeconds() - 2 - ago), 'iat', nowSeconds() - 2 - ago - life) }),
      })),
      fc.tuple(d, fc.integer({ min: 1, max: 299 })).map(([ahead, life]) => ({
        name: 'iat in the future',
        apply: (tk: Token) => ({ ...tk, claims: set(set(tk.claims, 'iat', nowSeconds() + 5 + ahead), 'exp', nowSeconds() + 5 + ahead + life) }),
      })),
      fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 301, max: 1_000_000 })).map(([ago, life]) => ({
        name: 'lifetime over 300 s',
        apply: (tk: Token) => ({ ...tk, claims: set(set(tk.claims, 'iat', nowSeconds() - ago), 'exp', nowSeconds() - ago + life) }),
      })),
      fc
        .tuple(fc.constantFrom('iat', 'exp'), fc.constantFrom<unknown>(undefined, 'now', null, {}, [], true, '1700000000'))
        .map(([claim, value]) => ({ name: `${claim} ${JSON.stringify(value)}`, apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, claim, value) }) })),
      fc.integer({ min: 5, max: 100_000 }).map((ahead) => ({ name: 'nbf in the future', apply: (tk: Token) => ({ ...tk, claims: set(tk.claims, 'nbf', nowSeconds() + ahead) }) })),
      fc
        .constantFrom('HS384', 'HS512', 'RS256', 'ES256', 'PS256', 'hs256', 'HS256 ', 'EdDSA')
        .map((alg) => ({ name: `header alg ${alg} over an HS256 signature`, apply: (tk: Token) => ({ ...tk, header: [['alg', alg]], signer: () => hs('HS256') }) })),
      fc.constantFrom('RS256', 'ES256').map((alg) => ({
        name: `${alg} signed with a foreign key`,
        apply: (tk: Token) =>
          ({ ...tk, header: [['alg', alg]], signer: () => ({ kind: 'asymmetric', hash: 'sha256', key: alg === 'RS256' ? rsaKey : ecKey, ec: alg === 'ES256' }) }) as Token,
      })),
      fc.integer({ min: 1, max: 1000 }).map((cut) => ({ name: `signature cut by ${cut}`, apply: (tk: Token) => ({ ...tk, post: (s: string) => s.slice(0, Math.max(s.lastIndexOf('.') + 1, s.length - cut)) }) })),
      fc.constant({
        name: 'payload swapped under the signature',
        apply: (tk: Token) => ({
          ...tk,
          post: (s: string) => {
            const [h, , sig] = s.split('.');
            return `${h}.${Buffer.from(objectText(set(tk.claims, 'jti', randomUUID()))).toString('base64url')}.${sig}`;
          },
        }),
      }),
    );

    return fc.record({ defect, junkClaims, junkHeader, alg: fc.constantFrom<'HS256' | 'HS384' | 'HS512'>('HS256', 'HS384', 'HS512'), asForm: fc.boolean() }).map(
      ({ defect: df, junkClaims: jc, junkHeader: jh, alg, asForm }) => ({
        defect: df.name,
        asForm,
        [fc.toStringMethod]: () => `${df.name} (${alg}, junk header ${JSON.stringify(jh)}, junk claims ${JSON.stringify(jc)}, ${asForm ? 'form' : 'JSON'})`,
        build: () => {
          const now = nowSeconds();
          const base: Token = {
            header: [['alg', alg], ['typ', 'JWT']],
            claims: [['iss', key.appname], ['iat', now - 1], ['exp', now + 60], ['jti', randomUUID()]],
            signer: () => hs(alg),
          };
          const tk = df.apply(base) as Token;
          const token = buildJwt(objectText([...tk.header, ...jh]), objectText([...jc, ...tk.claims]), tk.signer());
          return tk.post ? tk.post(token) : token;
        },
      }),
    );
  };

  it(
    'when a request token has any one defect (signature, algorithm, iss, jti, sub, aud, iat, exp, nbf, replay), then 401 and no jti, session or last_login is recorded',
    async () => {
      await fc.assert(
        fc.asyncProperty(defectiveRequestToken(), async (c) => {
          await expectAnswer(post(API_KEY_TOKEN, 'jwt', c.build(), c.asForm), [401]);
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when a well-signed request token carries NUL, lone surrogates, huge numbers or odd types in its claims, then never a 5xx, and a refusal records nothing',
    async () => {
      const odd = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 20 }),
        fc.tuple(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })).map(([a, b]) => `${a}\u0000${b}`),
        fc.constantFrom('\ud800', 'a\udfffb', '\u0000', '\uFEFF', '\u202e', 'x'.repeat(256)),
      );
      const claims = fc.record({
        iss: fc.oneof({ weight: 4, arbitrary: fc.constant<unknown>(undefined) }, odd, fc.constantFrom(`${'k'}\u0000`)),
        jti: fc.oneof(odd, fc.constant(randomUUID())),
        sub: fc.option(fc.oneof(fc.constant('ISS'), odd), { nil: undefined }),
        iatOffset: fc.oneof(fc.integer({ min: -100, max: 0 }), fc.double({ min: -100, max: 0, noNaN: true })),
        life: fc.oneof(fc.integer({ min: 1, max: 300 }), fc.double({ min: 0.5, max: 300, noNaN: true })),
        extra: fc.array(fc.tuple(fc.oneof(dangerousKey, odd), fc.oneof(odd, wrongTypeValue, fc.constantFrom(1e308, -1e308, 2 ** 64))), { maxLength: 3 }),
        kid: fc.option(fc.oneof(odd, wrongTypeValue), { nil: undefined }),
      });

      await fc.assert(
        fc.asyncProperty(claims, fc.boolean(), async (c, asForm) => {
          const now = nowSeconds();
          const iss = c.iss === undefined ? key.appname : c.iss;
          const entries: [string, unknown][] = [
            ...c.extra,
            ['iss', iss],
            ['iat', now + c.iatOffset],
            ['exp', now + c.iatOffset + c.life],
            ['jti', c.jti],
          ];
          if (c.sub !== undefined) entries.push(['sub', c.sub === 'ISS' ? iss : c.sub]);
          const header: [string, unknown][] = [['alg', 'HS256']];
          if (c.kid !== undefined) header.push(['kid', c.kid]);
          const token = buildJwt(objectText(header), objectText(entries), { kind: 'hmac', hash: 'sha256', key: key.appkey });

          await expectAnswer(post(API_KEY_TOKEN, 'jwt', token, asForm), [200, 401]);
        }),
        runs(200),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when a JWT has a random header, random claims and a signature it cannot be trusted by, then 401 on every token route and as a bearer (400 once headers outgrow Node’s limit), and nothing changes',
    async () => {
      const alg = fc.oneof(
        fc.constantFrom<unknown>('none', 'HS256', 'HS384', 'HS512', 'RS256', 'ES256', 'ES384', 'PS256', 'EdDSA', 'none ', ''),
        fc.string({ maxLength: 10 }),
        wrongTypeValue,
      );
      const header = fc
        .tuple(
          fc.option(alg, { nil: undefined }),
          fc.array(fc.tuple(fc.oneof(fc.constantFrom('kid', 'typ', 'cty', 'jwk', 'jku', 'crit', 'x5c'), dangerousKey), fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), wrongTypeValue)), {
            maxLength: 3,
          }),
        )
        .map(([a, rest]) => objectText(a === undefined ? rest : [['alg', a], ...rest]));
      const claimsText = fc.oneof(
        jsonText,
        fc
          .array(
            fc.tuple(
              fc.oneof(fc.constantFrom('iss', 'sub', 'aud', 'iat', 'exp', 'nbf', 'jti', 'sid', 'typ', 'scope', 'roles'), dangerousKey, fc.string({ maxLength: 6 })),
              fc.oneof(
                fc.constantFrom<unknown>(key.appname, 'http://issuer.test', 'Bearer', 'Refresh', ['admin']),
                fc.integer(),
                fc.constantFrom(1e308, -1, 0, 2 ** 53, 1.5),
                fc.string({ unit: 'binary', maxLength: 12 }),
                wrongTypeValue,
              ),
            ),
            { maxLength: 8 },
          )
          .map(objectText),
        fc.constantFrom('', 'null', '"string"', '[]', '123', '{', 'not json'),
      );
      const signer = fc.oneof(
        fc.constant<() => Signer>(() => ({ kind: 'none' })),
        fc.string({ maxLength: 40 }).map((s): (() => Signer) => () => ({ kind: 'garbage', signature: s.replace(/[^A-Za-z0-9_-]/g, '') })),
        fc.string({ minLength: 1, maxLength: 40 }).map((secret): (() => Signer) => () => ({ kind: 'hmac', hash: 'sha256', key: secret })),
        fc.constant<() => Signer>(() => ({ kind: 'asymmetric', hash: 'sha256', key: rsaKey, ec: false })),
        fc.constant<() => Signer>(() => ({ kind: 'asymmetric', hash: 'sha256', key: ecKey, ec: true })),
        fc.constant<() => Signer>(() => ({ kind: 'garbage', signature: 'A'.repeat(86) })),
      );
      const destination = fc.constantFrom('request token', 'refresh', 'bearer', 'bearer write');

      await fc.assert(
        fc.asyncProperty(header, claimsText, signer, destination, fc.boolean(), async (h, c, s, dest, asForm) => {
          const token = buildJwt(h, c, s());
          const req: RawRequest =
            dest === 'request token'
              ? post(API_KEY_TOKEN, 'jwt', token, asForm)
              : dest === 'refresh'
                ? post(REFRESH_TOKEN, 'refresh_token', token, asForm)
                : dest === 'bearer'
                  ? { method: 'GET', target: KEYS, headers: [['Authorization', `Bearer ${token}`]] }
                  : {
                      method: 'PUT',
                      target: `${KEYS}/${key.appname}`,
                      headers: [['Authorization', `Bearer ${token}`], ['Content-Type', 'application/json']],
                      body: '{"description":"taken over","roles":["admin"]}',
                    };

          await expectAnswer(req, refusedTokenAnswers(req));
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when a request, refresh, access or ID token is cut at any position or sent to the wrong place, then 401 and nothing changes (no rotation, no revocation)',
    async () => {
      const kind = fc.constantFrom('request', 'refresh', 'access', 'id', 'revoked refresh');

      await fc.assert(
        fc.asyncProperty(kind, fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), fc.boolean(), fc.boolean(), async (k, at, whole, asForm) => {
          const full =
            k === 'request'
              ? signRequestToken(key.appname, key.appkey)
              : k === 'refresh'
                ? liveRefresh
                : k === 'access'
                  ? liveAccess
                  : k === 'id'
                    ? liveId
                    : revokedRefresh;
          // A whole token is only sent where it does not belong (the revoked one anywhere).
          const token = whole && k !== 'request' ? full : full.slice(0, 1 + Math.floor(at * (full.length - 1)));
          const requests: RawRequest[] =
            k === 'request'
              ? [post(API_KEY_TOKEN, 'jwt', token, asForm)]
              : k === 'refresh' || k === 'revoked refresh'
                ? [post(REFRESH_TOKEN, 'refresh_token', token, asForm), { method: 'GET', target: KEYS, headers: [['Authorization', `Bearer ${token}`]] }]
                : [
                    post(REFRESH_TOKEN, 'refresh_token', token, asForm),
                    post(API_KEY_TOKEN, 'jwt', token, asForm),
                    ...(k === 'id' || !whole ? [{ method: 'GET', target: KEYS, headers: [['Authorization', `Bearer ${token}`]] } as RawRequest] : []),
                  ];
          if (k === 'refresh' && whole) requests.shift();

          for (const req of requests) await expectAnswer(req, [401]);
        }),
        runs(200),
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when a refresh token is signed with the service key but has one defect (session, type, issuer, audience, expiry, subject, kid, algorithm), then 401 and the session is neither rotated nor revoked',
    async () => {
      const { kid, privateKey } = await t.services.signingKeys.signingKey();
      const real = claimsOf(liveRefresh);
      const sign = (header: [string, unknown][], claims: [string, unknown][], signer?: Signer) =>
        buildJwt(objectText(header), objectText(claims), signer ?? { kind: 'asymmetric', hash: 'sha256', key: privateKey, ec: true });
      const base = (): [string, unknown][] => Object.entries(real);
      const set = (claims: [string, unknown][], name: string, value: unknown): [string, unknown][] =>
        claims.filter(([k]) => k !== name).concat(value === undefined ? [] : [[name, value]]);
      const esHeader: [string, unknown][] = [['alg', 'ES256'], ['typ', 'JWT'], ['kid', kid]];

      const defect = fc.oneof(
        fc.constant(named('sid of no session', () => sign(esHeader, set(base(), 'sid', randomUUID())))),
        fc.constantFrom<unknown>('Bearer', 'ID', 'refresh', 'REFRESH', 5, null, undefined).map((typ) => named(`typ ${String(typ)}`, () => sign(esHeader, set(base(), 'typ', typ)))),
        fc.oneof(fc.string({ maxLength: 20 }), wrongTypeValue).filter((v) => v !== real.iss).map((iss) => named(`iss ${JSON.stringify(iss)}`, () => sign(esHeader, set(base(), 'iss', iss)))),
        fc.oneof(fc.string({ maxLength: 20 }), wrongTypeValue).filter((v) => v !== real.aud).map((aud) => named(`aud ${JSON.stringify(aud)}`, () => sign(esHeader, set(base(), 'aud', aud)))),
        fc.integer({ min: 2, max: 100_000 }).map((ago) => named(`expired ${ago} s ago`, () => sign(esHeader, set(base(), 'exp', nowSeconds() - ago)))),
        fc.constantFrom<unknown>(undefined, 'soon', null).map((exp) => named(`exp ${String(exp)}`, () => sign(esHeader, set(base(), 'exp', exp)))),
        fc.integer({ min: 5, max: 100_000 }).map((ahead) => named(`nbf in ${ahead} s`, () => sign(esHeader, set(base(), 'nbf', nowSeconds() + ahead)))),
        fc.oneof(fc.constant(randomUUID()), fc.string({ maxLength: 10 })).map((sub) => named(`sub ${sub}`, () => sign(esHeader, set(base(), 'sub', sub)))),
        fc.constantFrom<unknown>(undefined, 5, null, {}).map((sid) => named(`sid ${JSON.stringify(sid)}`, () => sign(esHeader, set(base(), 'sid', sid)))),
        fc.oneof(fc.string({ maxLength: 20 }), wrongTypeValue, fc.constant(undefined)).filter((v) => v !== kid).map((k) => named(`kid ${JSON.stringify(k)}`, () => sign(set(esHeader, 'kid', k), base()))),
        fc.constantFrom('ES384', 'RS256', 'HS256', 'none').map((alg) => named(`header alg ${alg}`, () => sign(set(esHeader, 'alg', alg), base()))),
        fc.constant(named('unsigned', () => sign([['alg', 'none'], ['kid', kid]], base(), { kind: 'none' }))),
        fc.constant(named('HS256 with a guessable secret', () => sign([['alg', 'HS256'], ['kid', kid]], base(), { kind: 'hmac', hash: 'sha256', key: JSON.stringify(real) }))),
      );

      await fc.assert(
        fc.asyncProperty(defect, fc.boolean(), async (make, asForm) => {
          await expectAnswer(post(REFRESH_TOKEN, 'refresh_token', make(), asForm), [401]);
        }),
        runs(200),
      );

      // The live refresh token still works: nothing above rotated or revoked its session.
      const res = await t.http().post(REFRESH_TOKEN).type('form').send({ refresh_token: liveRefresh });
      expect(res.status).toBe(200);
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'when a refresh token signed with the service key carries a session id or token id that is not a UUID, then 401, never a 5xx',
    async () => {
      const { kid, privateKey } = await t.services.signingKeys.signingKey();
      const fresh = claimsOf((await loginAs(t, await createUser(t, { role: 'viewer' }))).refresh_token);
      const notUuid = fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('x', "'; DROP TABLE sessions; --", '\u0000', '00000000-0000-0000-0000-00000000000g'));
      await guard.reset();

      await fc.assert(
        fc.asyncProperty(fc.constantFrom('sid', 'jti'), notUuid, async (claim, value) => {
          fc.pre(!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value));
          const claims = Object.entries({ ...fresh, [claim]: value });
          const token = buildJwt(objectText([['alg', 'ES256'], ['typ', 'JWT'], ['kid', kid]]), objectText(claims), {
            kind: 'asymmetric',
            hash: 'sha256',
            key: privateKey,
            ec: true,
          });

          // A service-signed token with the live session but a jti that is not the current one reads as
          // reuse, and the contract revokes that session: only the sid case must leave the database alone.
          if (claim === 'sid') await expectAnswer(post(REFRESH_TOKEN, 'refresh_token', token, false), [401]);
          else await send(t.baseUrl, post(REFRESH_TOKEN, 'refresh_token', token, false), [401]);
        }),
        runs(100),
      );
    },
    PROPERTY_TIMEOUT,
  );
});
