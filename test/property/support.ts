import { createHmac, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { connect } from 'node:net';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../src/shared/errors';
import type { Queryable } from '../../src/db/database';

/**
 * Shared bits of the property-based tests: a raw HTTP/1.1 client (duplicate headers, any content
 * type, any percent-encoding), the error-body and no-internals checks every response must pass,
 * a snapshot of every table, hand-built JWTs and the arbitraries the properties draw from.
 */

export const KEYS = '/api/v1/api-keys';
export const APPNAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const ROLE_NAMES = ['viewer', 'editor', 'admin'];

/** fast-check settings: a bounded number of runs, the seed left to fast-check so failures report theirs. */
export const runs = (numRuns: number) => ({ numRuns });

/** Jest timeout for one property. */
export const PROPERTY_TIMEOUT = 90_000;

// ---------------------------------------------------------------------------------------------
// Raw HTTP client

export interface RawRequest {
  method: string;
  /** The request-target exactly as written on the request line (must be ASCII). */
  target: string;
  /** Header lines in order; a name may repeat. Values are written as UTF-8 bytes. */
  headers?: [string, string][];
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean;
}

export interface RawResponse {
  status: number;
  /** Lower-cased header names, every value in order. */
  headers: Record<string, string[]>;
  header: (name: string) => string | undefined;
  body: Buffer;
  text: string;
}

function parseResponse(raw: Buffer, method: string): RawResponse | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!statusLine) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
  const headers: Record<string, string[]> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  let rest = raw.subarray(end + 4);
  let body: Buffer;
  const noBody = method === 'HEAD' || statusLine[1] === '204' || statusLine[1] === '304';
  if (noBody) {
    body = Buffer.alloc(0);
  } else if (/chunked/i.test(headers['transfer-encoding']?.join(',') ?? '')) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) return undefined;
      const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length']) {
    const length = Number(headers['content-length'][0]);
    if (rest.length < length) return undefined;
    body = rest.subarray(0, length);
  } else {
    body = rest;
  }
  const status = Number(statusLine[1]);
  return { status, headers, header: (name) => headers[name.toLowerCase()]?.join(', '), body, text: body.toString('utf8') };
}

/** Writes one HTTP/1.1 request on a fresh connection, exactly as given, and reads the answer. */
export function rawRequest(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
  const lines = [`${req.method} ${req.target} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  for (const [name, value] of req.headers ?? []) lines.push(`${name}: ${value}`);
  let payload: Buffer = Buffer.alloc(0);
  if (body !== undefined) {
    if (req.chunked) {
      lines.push('Transfer-Encoding: chunked');
      const chunks: Buffer[] = [];
      for (let i = 0; i < body.length; i += 4096) {
        const part = body.subarray(i, i + 4096);
        chunks.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
      }
      chunks.push(Buffer.from('0\r\n\r\n'));
      payload = Buffer.concat(chunks);
    } else {
      lines.push(`Content-Length: ${body.length}`);
      payload = body;
    }
  }
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8');

  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const received: Buffer[] = [];
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      let parsed: RawResponse | undefined;
      try {
        parsed = parseResponse(Buffer.concat(received), req.method);
      } catch (parseError) {
        return reject(parseError as Error);
      }
      if (parsed) return resolve(parsed);
      reject(err ?? new Error(`connection closed without a complete response (${Buffer.concat(received).length} bytes read)`));
    };
    const timer = setTimeout(() => finish(new Error('no response within 10 s')), 10_000);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.on('error', (err) => finish(err));
    socket.write(Buffer.concat([head, payload]));
  });
}

/** A short, printable description of a request for failure messages. */
export function describeRequest(req: RawRequest): string {
  const body = req.body === undefined ? '' : ` body(${req.body.length})=${JSON.stringify(req.body.toString().slice(0, 300))}`;
  return `${req.method} ${req.target.slice(0, 300)} headers=${JSON.stringify(req.headers ?? [])}${req.chunked ? ' chunked' : ''}${body}`;
}

// ---------------------------------------------------------------------------------------------
// What every answer must satisfy

const STACK_TRACE = /\n\s+at |\bat [^\s]+ \(|node_modules|\.[jt]s:\d+:\d+/;
const SQL_TEXT =
  /\b(SELECT\s.+\sFROM|INSERT INTO|UPDATE\s+\w+\s+SET|DELETE FROM)\b|syntax error at or near|invalid input syntax|violates [a-z ]*constraint|invalid byte sequence|out of range for type|relation "[^"]+" does not exist|duplicate key value/i;

/**
 * The service never answers 5xx; every 4xx is exactly {status, name, message} as JSON, with status
 * equal to the HTTP status and name from the closed list; no answer carries a stack trace or SQL;
 * a 401 carries a Bearer challenge.
 */
export function expectWellFormed(res: RawResponse, req: RawRequest): void {
  const where = `${describeRequest(req)}\n→ ${res.status} ${res.text.slice(0, 500)}`;
  if (res.status >= 500) throw new Error(`5xx answer: ${where}`);
  if (STACK_TRACE.test(res.text) || SQL_TEXT.test(res.text)) throw new Error(`internals in the body: ${where}`);
  if (res.status < 400 || req.method === 'HEAD') return;
  if (!/^application\/json\b/.test(res.header('content-type') ?? '')) throw new Error(`error without a JSON content type: ${where}`);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    throw new Error(`error body is not JSON: ${where}`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error(`error body is not an object: ${where}`);
  const keys = Object.keys(body).sort();
  if (keys.join(',') !== 'message,name,status') throw new Error(`error body keys are ${JSON.stringify(keys)}: ${where}`);
  const { status, name, message } = body as { status: unknown; name: unknown; message: unknown };
  if (status !== res.status) throw new Error(`error body status ${String(status)} differs from HTTP ${res.status}: ${where}`);
  if (typeof name !== 'string' || ERROR_STATUS[name as keyof typeof ERROR_STATUS] !== res.status) {
    throw new Error(`error name ${JSON.stringify(name)} is not the one for ${res.status}: ${where}`);
  }
  if (typeof message !== 'string') throw new Error(`error message is not a string: ${where}`);
  if (res.status === 401 && !/^Bearer\b/.test(res.header('www-authenticate') ?? '')) {
    throw new Error(`401 without a Bearer challenge: ${where}`);
  }
}

/** Sends a request, checks the answer is well-formed, and optionally that its status is one of `allowed`. */
export async function send(baseUrl: string, req: RawRequest, allowed?: number[]): Promise<RawResponse> {
  const res = await rawRequest(baseUrl, req);
  expectWellFormed(res, req);
  if (allowed && !allowed.includes(res.status)) {
    throw new Error(`expected ${allowed.join(' or ')}, got ${res.status}: ${describeRequest(req)}\n→ ${res.text.slice(0, 500)}`);
  }
  return res;
}

// ---------------------------------------------------------------------------------------------
// The database, whole

const TABLES = ['users', 'api_keys', 'sessions', 'request_token_jtis', 'signing_keys'];

/** Every row of every table (bytea as hex, timestamps in full), as one comparable value. */
export async function snapshotDb(db: Queryable): Promise<Record<string, string[]>> {
  const columns = TABLES.map(
    (table) => `(SELECT coalesce(json_agg(row_to_json(x)::text ORDER BY row_to_json(x)::text), '[]'::json) FROM ${table} x) AS ${table}`,
  );
  const { rows } = await db.query<Record<string, string[]>>(`SELECT ${columns.join(', ')}`);
  return rows[0]!;
}

/** Throws with the differing tables when the database is not what it was. */
export function expectUnchanged(before: Record<string, string[]>, after: Record<string, string[]>, what: string): void {
  const changed = TABLES.filter((table) => JSON.stringify(before[table]) !== JSON.stringify(after[table]));
  if (changed.length === 0) return;
  const detail = changed.map((table) => {
    const was = new Set(before[table]);
    const now = new Set(after[table]);
    return `${table}: removed ${JSON.stringify(before[table]!.filter((r) => !now.has(r)))} added ${JSON.stringify(after[table]!.filter((r) => !was.has(r)))}`;
  });
  throw new Error(`a rejected request changed the database: ${what}\n${detail.join('\n')}`);
}

/**
 * Keeps a baseline of the database: a rejected request (4xx) must leave it exactly as it was; an
 * accepted one may change it, and becomes the new baseline.
 */
export class DbGuard {
  private baseline: Record<string, string[]> | undefined;
  constructor(private readonly db: Queryable) {}

  async reset(): Promise<void> {
    this.baseline = await snapshotDb(this.db);
  }

  async check(res: RawResponse, req: RawRequest): Promise<void> {
    const before = this.baseline;
    const after = await snapshotDb(this.db);
    this.baseline = after;
    if (res.status >= 400 && before) expectUnchanged(before, after, `${describeRequest(req)} → ${res.status}`);
  }
}

/**
 * Node's 16 KiB header limit comes before any check of ours: headers over it are a 400, and near it
 * (this count leaves out the request line and the Host header) a 400 or the route's own answer.
 */
export function headerLimitAnswers(req: RawRequest, ownAnswers: number[]): number[] {
  const headerBytes = (req.headers ?? []).reduce((n, [name, value]) => n + name.length + Buffer.byteLength(value) + 4, 0);
  if (headerBytes > 16 * 1024) return [400];
  if (headerBytes > 15 * 1024) return [400, ...ownAnswers];
  return ownAnswers;
}

/**
 * Sends one request and checks it: well-formed answer, status among `allowed` (when given), and a
 * database untouched by a rejection. The baseline follows accepted requests, even failing ones.
 */
export async function exchange(baseUrl: string, guard: DbGuard, req: RawRequest, allowed?: number[]): Promise<RawResponse> {
  const res = await rawRequest(baseUrl, req);
  try {
    expectWellFormed(res, req);
    if (allowed && !allowed.includes(res.status)) {
      throw new Error(`expected ${allowed.join(' or ')}, got ${res.status}: ${describeRequest(req)}\n→ ${res.text.slice(0, 500)}`);
    }
  } finally {
    await guard.check(res, req);
  }
  return res;
}

// ---------------------------------------------------------------------------------------------
// Hand-built JWTs (exact header and payload text, so `__proto__` keys and duplicates survive)

export const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

export type Signer =
  | { kind: 'hmac'; hash: 'sha256' | 'sha384' | 'sha512'; key: string | Buffer }
  | { kind: 'asymmetric'; hash: 'sha256' | 'sha384'; key: KeyObject; ec: boolean }
  | { kind: 'none' }
  | { kind: 'garbage'; signature: string };

/** `header.payload.signature` from the exact JSON texts given. */
export function buildJwt(headerText: string, payloadText: string, signer: Signer): string {
  const input = `${b64url(headerText)}.${b64url(payloadText)}`;
  switch (signer.kind) {
    case 'hmac':
      return `${input}.${createHmac(signer.hash, signer.key).update(input).digest('base64url')}`;
    case 'asymmetric': {
      const key = signer.ec ? { key: signer.key, dsaEncoding: 'ieee-p1363' as const } : signer.key;
      return `${input}.${cryptoSign(signer.hash, Buffer.from(input), key).toString('base64url')}`;
    }
    case 'none':
      return `${input}.`;
    case 'garbage':
      return `${input}.${signer.signature}`;
  }
}

/** JSON object text from entries, keeping every key as written (including `__proto__` and repeats). */
export function objectText(entries: [string, unknown][]): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v === undefined ? 'null' : JSON.stringify(v)}`).join(',')}}`;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** Keys that trip up naive object handling. */
export const dangerousKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  'isPrototypeOf',
);

const fieldNames = fc.constantFrom(
  'appname',
  'description',
  'roles',
  'appkey',
  'last_login',
  'last_ip',
  'jwt',
  'username',
  'password',
  'refresh_token',
  'grant_type',
  'limit',
  'after',
);

export const anyKey = fc.oneof(dangerousKey, fieldNames, fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 8 }));

/** Number literals, including ones JSON.parse turns into Infinity or rounds. */
export const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom('1e309', '-1e309', '1E+400', '123456789012345678901234567890', '-0', '0.0000000000000000000000001', '9007199254740993', '1e-400'),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
);

/** String literals: any code point, escaped NUL and lone surrogates, long runs. */
export const stringText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"\\u0000"', '"a\\u0000b"', '"\\ud800"', '"\\udfff\\ud800"', '"\\uFEFF"', '""', '"\\n\\t"'),
  fc.integer({ min: 1, max: 3000 }).map((n) => JSON.stringify('x'.repeat(n))),
);

/** JSON text of any shape, objects keyed with dangerous names too. */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; leaf: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('array'), tie('object')),
  leaf: fc.oneof(fc.constant('null'), fc.constant('true'), fc.constant('false'), numberText, stringText),
  array: fc.array(tie('value'), { maxLength: 5 }).map((xs) => `[${xs.join(',')}]`),
  object: fc
    .array(fc.tuple(anyKey, tie('value')), { maxLength: 5 })
    .map((es) => `{${es.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
})).value;

/** Bodies that are not even JSON: truncations, garbage, huge. */
export const brokenJsonText = fc.oneof(
  jsonText.filter((s) => s.length > 1).chain((s) => fc.integer({ min: 1, max: s.length - 1 }).map((i) => s.slice(0, i))),
  fc.constantFrom('{', '{"a":}', "{'a':1}", '{"a":1,}', 'undefined', 'NaN', '{"a":1}{"b":2}', '\u0000', '\uFEFF\uFEFF{}', '[1,]', '{"__proto__":'),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** A body of 64 KiB and a little more: must be 413 where a body is read. */
export const hugeJsonText = fc
  .integer({ min: 64 * 1024 + 1, max: 70 * 1024 })
  .chain((size) => fc.constantFrom(`{"description":"${'x'.repeat(size)}"}`, `[${'1,'.repeat(size / 2)}1]`, `"${'y'.repeat(size)}"`));

export const wrongContentType = fc.oneof(
  fc.constantFrom(
    'text/plain',
    'application/xml',
    'text/xml',
    'multipart/form-data; boundary=xyz',
    'application/octet-stream',
    'application/json-patch+json',
    'application/jsonx',
    'json',
    'application',
    '*/*',
    'text/json',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
    'application/json; charset=iso-8859-1',
    'application/json; charset=nonsense',
    'application/vnd.api+json',
    '',
    ';;;',
    'application/json/extra',
  ),
  fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), fc.stringMatching(/^[a-z0-9.+-]{1,12}$/)).map(([a, b]) => `${a}/${b}`),
);

/** Content types under which JSON is read. */
export const jsonContentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/json;charset=UTF-8',
  'application/json ; foo=bar',
);

/** A header value Node's parser accepts: no control characters other than HTAB. */
export function headerSafe(value: string): boolean {
  return [...value].every((c) => {
    const code = c.codePointAt(0)!;
    return code === 9 || (code >= 0x20 && code !== 0x7f);
  });
}

/** Authorization values that must never authenticate. Header-safe: no control characters. */
export const garbageAuthorization = fc.oneof(
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'bearer null',
    'Bearer undefined',
    'Bearer a.b.c',
    'Bearer ..',
    'Bearer eyJhbGciOiJub25lIn0.e30.',
    'Basic YWRtaW46YWRtaW4=',
    'Token abc',
    'Bearer\tabc',
    'BearerXYZ',
    'Bearer ====',
    'Bearer a b',
    'Digest username="a"',
    'Bearer ' + 'A'.repeat(8000),
  ),
  fc
    .tuple(fc.constantFrom('Bearer ', 'bearer ', 'BEARER  ', 'Basic ', '', 'Bearer:', 'Bearer %20'), fc.string({ unit: 'grapheme-ascii', maxLength: 200 }))
    .map(([scheme, rest]) => `${scheme}${rest}`),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
).filter(headerSafe);

// ---------------------------------------------------------------------------------------------
// The contract's rules for request bodies, as an oracle independent of the service's schemas

const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** NUL or an unpaired surrogate: a 400 in any string (contract, "Bad input stays 400"). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const storable = (s: string) => !s.includes('\u0000') && !LONE_SURROGATE.test(s);
const validDescription = (v: unknown) => typeof v === 'string' && storable(v) && [...v].length <= 1024;
const validRoles = (v: unknown) => Array.isArray(v) && v.length <= 1 && v.every((r) => typeof r === 'string' && ROLE_NAMES.includes(r));

/** A create config: appname (pattern), optional description (≤ 1024, no NUL or unpaired surrogate), roles (≤ 1 known), nothing else. */
export function isValidCreateBody(v: unknown): boolean {
  if (!isObject(v)) return false;
  if (Object.keys(v).some((k) => !['appname', 'description', 'roles'].includes(k))) return false;
  if (!own(v, 'appname') || typeof v.appname !== 'string' || !APPNAME.test(v.appname)) return false;
  if (own(v, 'description') && !validDescription(v.description)) return false;
  return own(v, 'roles') && validRoles(v.roles);
}

/** An update config: optional description, optional roles, nothing else. */
export function isValidUpdateBody(v: unknown): boolean {
  if (!isObject(v)) return false;
  if (Object.keys(v).some((k) => !['description', 'roles'].includes(k))) return false;
  if (own(v, 'description') && !validDescription(v.description)) return false;
  return !own(v, 'roles') || validRoles(v.roles);
}

/** JSON.parse, or undefined for text that is not JSON (express.json also refuses top-level scalars). */
export function parseJsonBody(text: string): unknown {
  try {
    // A leading byte order mark is ignored, as RFC 8259 §8.1 allows (body-parser strips it).
    const value: unknown = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Values of the wrong type for any field. */
export const wrongTypeValue = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { minKeys: 1, maxKeys: 2 }),
  fc.constant(1e308),
  fc.constant(-(2 ** 53) - 2),
);

export const badAppname = fc.oneof(
  wrongTypeValue,
  fc.constantFrom('', 'Billing', '.hidden', '-dash', '_x', 'a/b', 'a b', 'a\u0000', 'é', 'a'.repeat(65), '\uff41', 'a\n', '..', 'a%2Fb'),
  fc.string({ unit: 'binary', maxLength: 70 }),
);

export const badDescription = fc.oneof(
  wrongTypeValue,
  fc.integer({ min: 1025, max: 1100 }).map((n) => 'd'.repeat(n)),
  fc.integer({ min: 513, max: 600 }).map((n) => '\u{1F600}'.repeat(n * 2)),
  fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([a, b]) => `${a}\u0000${b}`),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

export const badRoles = fc.oneof(
  wrongTypeValue,
  fc.constantFrom<unknown>(['superuser'], ['viewer', 'editor'], ['Viewer'], ['admin '], [null], [['viewer']], 'viewer', [1], ['viewer', 'viewer'], [''], ['__proto__']),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 }),
);

export const goodRoles = fc.constantFrom<string[]>([], ['viewer'], ['editor'], ['admin']);
export const goodDescription = fc.string({ unit: 'binary', maxLength: 40 }).filter(storable);
