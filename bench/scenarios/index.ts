import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import { databaseUrl, insertFloorSessions } from '../harness/database';
import type { LoadPlan } from '../harness/load';
import { ROOT, startNode, type ServerHandle } from '../harness/processes';
import { ADMIN_PASSWORD, ADMIN_USERNAME, ISSUER, exchange, mapLimit, publicJwk, startService, type ServiceSettings } from '../harness/service';
import { createPrivateKey } from 'node:crypto';
import { clientAssertion, requestToken } from '../harness/tokens';

export interface Dataset {
  db: string;
  totalKeys: number;
  /** Keys created through the API, whose appkeys the benchmark signs request tokens with. */
  keys: { appname: string; appkey: string }[];
  /** Appnames read by the read scenarios (a random sample of the table). */
  appnames: string[];
}

export interface BenchContext {
  /** million: the dataset of bench/scenarios/million.ts (its size depends on --quick), else main. */
  datasets: { main: Dataset; small: Dataset; large: Dataset; million: Dataset };
  service: ServiceSettings;
  /** PKCS#8 PEM of the floors' own ES256 key (they sign tokens of their own). */
  floorPrivateKeyPem: string;
  connections: number;
}

export interface Side {
  label: string;
  handle: ServerHandle;
  /** Fresh inputs for one autocannon run (warm-up or measured). */
  plan: () => Promise<LoadPlan>;
  /**
   * Called after each measured run of this side, before the other side starts: waits until the work
   * its load left behind (an outbox's backlog) is done, and returns how many seconds that took. The
   * side is charged for them (its req/s is over the run and that time), so work put off past the
   * run is neither free nor done in the other side's window.
   */
  settle?: () => Promise<number>;
}

export interface Scenario {
  id: string;
  title: string;
  ours: string;
  floor: string;
  /** ours req/s must be at least this times the floor's. */
  target: number;
  /** Peak RSS ours/floor must stay within this; null: not judged (a rival's memory is its own business). Default 1.2. */
  rssTarget?: number | null;
  setup: (ctx: BenchContext) => Promise<{ ours: Side; floor: Side }>;
  /** A target beyond throughput, judged once the rounds are over (e.g. a lag sampled during them, or the median round's p99s). */
  extra?: (median: { ours: { p99: number }; floor: { p99: number } }) => { met: boolean; text: string };
}

const FLOOR_DIR = path.join(ROOT, 'dist', 'bench-floor');

/** A floor app, with the service's node flags (so --cpu-prof profiles both sides). */
export function startFloor(kind: string, ctx: BenchContext, env: Record<string, string> = {}): Promise<ServerHandle> {
  const floorEnv = {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl(ctx.datasets.main.db),
    DATABASE_POOL_SIZE: String(ctx.service.poolSize),
    ...env,
  };
  return startNode(`floor-${kind}`, path.join(FLOOR_DIR, `${kind}.js`), floorEnv, ctx.service.nodeArgs);
}

const staticPlan = (requests: autocannon.Request[]) => () => Promise.resolve({ requests });

/** GET /api/v1/api-keys/{appname} over the dataset's sample of appnames, one bearer token for all. */
function readRequests(token: string, appnames: string[]): autocannon.Request[] {
  let i = 0;
  return [
    {
      method: 'GET',
      setupRequest: (req) => ({
        ...req,
        path: `/api/v1/api-keys/${appnames[i++ % appnames.length]}`,
        headers: { authorization: `Bearer ${token}` },
      }),
    },
  ];
}

/** POST /api/v1/auth/token with a freshly signed request token (unique jti) per request. */
export function exchangeRequests(keys: Dataset['keys']): autocannon.Request[] {
  let i = 0;
  return [
    {
      method: 'POST',
      path: '/api/v1/auth/token',
      setupRequest: (req) => {
        const key = keys[i++ % keys.length]!;
        return {
          ...req,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jwt: requestToken(key.appname, key.appkey) }),
        };
      },
    },
  ];
}

/**
 * POST /api/auth/bearer/refresh, each refresh token presented once: a shared queue of unused tokens,
 * topped up by every successful response with the token it returns. With pipelining 1 a connection
 * builds its next request only after reading the previous response, so the queue never runs dry.
 */
function refreshRequests(initial: string[]): autocannon.Request[] {
  const queue = [...initial];
  return [
    {
      method: 'POST',
      path: '/api/auth/bearer/refresh',
      setupRequest: (req) => ({
        ...req,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `refresh_token=${queue.shift() ?? 'exhausted'}`,
      }),
      onResponse: (status, body) => {
        if (status === 200) queue.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
      },
    },
  ];
}

/** node-oidc-provider, serving the dataset's keys as clients of one auth method (bench/rivals/oidc-provider.mjs). */
const RIVAL_ISSUER = 'http://rival.local';
const OURS_TOKEN_ENDPOINT = '/oauth2/token';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

function startOidcProvider(ctx: BenchContext, authMethod: 'client_secret_basic' | 'client_secret_jwt'): Promise<ServerHandle> {
  const jwk = createPrivateKey(ctx.floorPrivateKeyPem).export({ format: 'jwk' });
  return startNode(
    `oidc-provider (${authMethod})`,
    path.join(ROOT, 'bench', 'rivals', 'oidc-provider.mjs'),
    {
      NODE_ENV: 'production',
      RIVAL_ISSUER,
      RIVAL_AUDIENCE: ISSUER,
      RIVAL_AUTH_METHOD: authMethod,
      RIVAL_CLIENTS: JSON.stringify(ctx.datasets.main.keys),
      RIVAL_PRIVATE_JWK: JSON.stringify(jwk),
    },
    ctx.service.nodeArgs,
  );
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const basicAuth = (key: Dataset['keys'][number]) =>
  `Basic ${Buffer.from(`${encodeURIComponent(key.appname)}:${encodeURIComponent(key.appkey)}`).toString('base64')}`;

/** Client credentials with client_secret_basic at `tokenPath`, the keys in turn. */
export function clientCredentialsBasic(tokenPath: string, keys: Dataset['keys']): autocannon.Request[] {
  let i = 0;
  return [
    {
      method: 'POST',
      path: tokenPath,
      setupRequest: (req) => ({ ...req, headers: { ...FORM, authorization: basicAuth(keys[i++ % keys.length]!) }, body: 'grant_type=client_credentials' }),
    },
  ];
}

/** Client credentials with client_secret_jwt at the rival: a fresh assertion (unique jti) per request, aud its issuer (oidc-provider 9 takes no other). */
function clientCredentialsJwt(keys: Dataset['keys']): autocannon.Request[] {
  let i = 0;
  return [
    {
      method: 'POST',
      path: '/token',
      setupRequest: (req) => {
        const key = keys[i++ % keys.length]!;
        const body = new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: CLIENT_ASSERTION_TYPE,
          client_assertion: clientAssertion(key.appname, key.appkey, RIVAL_ISSUER),
        }).toString();
        return { ...req, headers: FORM, body };
      },
    },
  ];
}

/** The jwt-bearer grant at the service's token endpoint: a fresh assertion (unique jti) per request. */
function jwtBearer(keys: Dataset['keys']): autocannon.Request[] {
  let i = 0;
  return [
    {
      method: 'POST',
      path: OURS_TOKEN_ENDPOINT,
      setupRequest: (req) => {
        const key = keys[i++ % keys.length]!;
        const body = new URLSearchParams({ grant_type: JWT_BEARER, assertion: requestToken(key.appname, key.appkey, { aud: ISSUER }) }).toString();
        return { ...req, headers: FORM, body };
      },
    },
  ];
}

const fresh = (requests: () => autocannon.Request[]) => () => Promise.resolve({ requests: requests() });

export async function serviceBearer(baseUrl: string, key: Dataset['keys'][number]): Promise<string> {
  return (await exchange(baseUrl, requestToken(key.appname, key.appkey))).access_token;
}

export async function readSide(ours: ServerHandle, data: Dataset): Promise<Side> {
  const token = await serviceBearer(ours.baseUrl, data.keys[0]!);
  return { label: ours.label, handle: ours, plan: staticPlan(readRequests(token, data.appnames)) };
}

/**
 * A scenario of the service against node-oidc-provider on the main dataset's keys: the same setup
 * for each, only the auth method and the two request builders differ. Its memory is not judged.
 */
function versusOidcProvider(s: Omit<Scenario, 'setup' | 'rssTarget'> & {
  authMethod: 'client_secret_basic' | 'client_secret_jwt';
  oursRequests: (keys: Dataset['keys']) => autocannon.Request[];
  rivalRequests: (keys: Dataset['keys']) => autocannon.Request[];
}): Scenario {
  const { authMethod, oursRequests, rivalRequests, ...scenario } = s;
  return {
    ...scenario,
    rssTarget: null,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const ours = await startService('ours', data.db, ctx.service);
      const rival = await startOidcProvider(ctx, authMethod);
      return {
        ours: { label: 'ours', handle: ours, plan: fresh(() => oursRequests(data.keys)) },
        floor: { label: 'oidc-provider', handle: rival, plan: fresh(() => rivalRequests(data.keys)) },
      };
    },
  };
}

export const scenarios: Scenario[] = [
  {
    id: 'read',
    title: 'read',
    ours: 'GET /api/v1/api-keys/{appname}, bearer token (1,000 keys)',
    floor: 'ES256 verify of the bearer + one primary-key SELECT',
    target: 0.8,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const ours = await startService('ours', data.db, ctx.service);
      // The floor verifies the very token the service gets, with the service's public key.
      const token = await serviceBearer(ours.baseUrl, data.keys[0]!);
      const floor = await startFloor('read', ctx, { FLOOR_PUBLIC_JWK: JSON.stringify(await publicJwk(ours.baseUrl)), FLOOR_ISSUER: ISSUER });
      return {
        ours: { label: 'ours', handle: ours, plan: staticPlan(readRequests(token, data.appnames)) },
        floor: { label: 'floor', handle: floor, plan: staticPlan(readRequests(token, data.appnames)) },
      };
    },
  },
  {
    id: 'exchange',
    title: 'api-key exchange',
    ours: 'POST /api/v1/auth/token, a fresh request token per request (1,000 keys)',
    floor: 'one SELECT of the secret + HS256 verify + one ES256 sign, no writes',
    target: 0.8,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const ours = await startService('ours', data.db, ctx.service);
      const floor = await startFloor('exchange', ctx, {
        MASTER_KEY: ctx.service.masterKey,
        FLOOR_PRIVATE_KEY: ctx.floorPrivateKeyPem,
        FLOOR_ISSUER: ISSUER,
      });
      return {
        ours: { label: 'ours', handle: ours, plan: () => Promise.resolve({ requests: exchangeRequests(data.keys) }) },
        floor: { label: 'floor', handle: floor, plan: () => Promise.resolve({ requests: exchangeRequests(data.keys) }) },
      };
    },
  },
  {
    id: 'password',
    title: 'password',
    ours: 'POST /api/auth/bearer/token (form-urlencoded)',
    floor: 'one bcrypt.compare at the same cost',
    target: 0.95,
    async setup(ctx) {
      const ours = await startService('ours', ctx.datasets.main.db, ctx.service);
      const floor = await startFloor('password', ctx, { FLOOR_PASSWORD: ADMIN_PASSWORD, BCRYPT_COST: String(ctx.service.bcryptCost) });
      const body = new URLSearchParams({ username: ADMIN_USERNAME, password: ADMIN_PASSWORD, grant_type: 'password' }).toString();
      const requests: autocannon.Request[] = [
        { method: 'POST', path: '/api/auth/bearer/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
      ];
      return {
        ours: { label: 'ours', handle: ours, plan: staticPlan(requests) },
        floor: { label: 'floor', handle: floor, plan: staticPlan(requests) },
      };
    },
  },
  {
    id: 'refresh',
    title: 'refresh',
    ours: 'POST /api/auth/bearer/refresh, each refresh token used once',
    floor: 'ES256 verify + one conditional UPDATE ... RETURNING + one ES256 sign',
    target: 0.8,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const ours = await startService('ours', data.db, ctx.service);
      const floor = await startFloor('refresh', ctx, { FLOOR_PRIVATE_KEY: ctx.floorPrivateKeyPem, FLOOR_ISSUER: ISSUER });
      const sessionsPerRun = ctx.connections + 16;
      const oursPlan = async () => {
        const tokens = await mapLimit(Array.from({ length: sessionsPerRun }, (_, i) => data.keys[i % data.keys.length]!), 8, async (key) =>
          (await exchange(ours.baseUrl, requestToken(key.appname, key.appkey))).refresh_token,
        );
        return { requests: refreshRequests(tokens) };
      };
      const floorPlan = async () => {
        const now = Math.floor(Date.now() / 1000);
        const sessions = Array.from({ length: sessionsPerRun }, () => ({ id: randomUUID(), jti: randomUUID() }));
        await insertFloorSessions(data.db, sessions);
        const tokens = sessions.map((s) =>
          jwt.sign(
            { iss: ISSUER, aud: ISSUER, sub: randomUUID(), sid: s.id, jti: s.jti, typ: 'Refresh', iat: now, exp: now + 1800 },
            ctx.floorPrivateKeyPem,
            { algorithm: 'ES256', keyid: 'floor' },
          ),
        );
        return { requests: refreshRequests(tokens) };
      };
      return { ours: { label: 'ours', handle: ours, plan: oursPlan }, floor: { label: 'floor', handle: floor, plan: floorPlan } };
    },
  },
  {
    id: 'list',
    title: 'list',
    ours: 'GET /api/v1/api-keys?limit=1000 with 1,000 keys, bearer token',
    floor: 'one SELECT of 1000 rows serialised as JSON',
    target: 0.8,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const ours = await startService('ours', data.db, ctx.service);
      const token = await serviceBearer(ours.baseUrl, data.keys[0]!);
      const floor = await startFloor('list', ctx);
      return {
        ours: {
          label: 'ours',
          handle: ours,
          plan: staticPlan([{ method: 'GET', path: '/api/v1/api-keys?limit=1000', headers: { authorization: `Bearer ${token}` } }]),
        },
        floor: { label: 'floor', handle: floor, plan: staticPlan([{ method: 'GET', path: '/api/v1/api-keys' }]) },
      };
    },
  },
  versusOidcProvider({
    id: 'oauth-cc-basic',
    title: 'oauth: client credentials, basic',
    ours: 'POST /oauth2/token, client_credentials, client_secret_basic (1,000 keys)',
    floor: 'oidc-provider 9, client_credentials, client_secret_basic, ES256 JWT access token, in-memory state',
    target: 1.0,
    authMethod: 'client_secret_basic',
    oursRequests: (keys) => clientCredentialsBasic(OURS_TOKEN_ENDPOINT, keys),
    rivalRequests: (keys) => clientCredentialsBasic('/token', keys),
  }),
  versusOidcProvider({
    id: 'oauth-jwt-bearer',
    title: 'oauth: jwt-bearer',
    ours: 'POST /oauth2/token, jwt-bearer grant, a fresh assertion per request (1,000 keys)',
    floor: 'oidc-provider 9, client_credentials, client_secret_jwt (a fresh assertion per request, replay-checked in memory)',
    target: 1.5,
    authMethod: 'client_secret_jwt',
    oursRequests: jwtBearer,
    rivalRequests: clientCredentialsJwt,
  }),
  versusOidcProvider({
    id: 'oauth-exchange',
    title: 'oauth: api-key exchange',
    ours: 'POST /api/v1/auth/token, a fresh request token per request (1,000 keys)',
    floor: 'oidc-provider 9, client_credentials, client_secret_jwt (as in oauth-jwt-bearer)',
    target: 1.5,
    authMethod: 'client_secret_jwt',
    oursRequests: exchangeRequests,
    rivalRequests: clientCredentialsJwt,
  }),
  {
    id: 'scale-read',
    title: 'scale: read',
    ours: 'read with 100,000 keys in the table',
    floor: 'the same service and scenario with 100 keys',
    target: 0.9,
    async setup(ctx) {
      const { large, small } = ctx.datasets;
      const big = await startService('ours@100k', large.db, ctx.service);
      const little = await startService('ours@100', small.db, ctx.service);
      return { ours: await readSide(big, large), floor: await readSide(little, small) };
    },
  },
  {
    id: 'scale-exchange',
    title: 'scale: api-key exchange',
    ours: 'api-key exchange with 100,000 keys in the table',
    floor: 'the same service and scenario with 100 keys',
    target: 0.9,
    async setup(ctx) {
      const { large, small } = ctx.datasets;
      const big = await startService('ours@100k', large.db, ctx.service);
      const little = await startService('ours@100', small.db, ctx.service);
      return {
        ours: { label: big.label, handle: big, plan: () => Promise.resolve({ requests: exchangeRequests(large.keys) }) },
        floor: { label: little.label, handle: little, plan: () => Promise.resolve({ requests: exchangeRequests(small.keys) }) },
      };
    },
  },
];
