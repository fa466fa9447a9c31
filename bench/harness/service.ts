import { readFileSync } from 'node:fs';
import path from 'node:path';
import { databaseUrl } from './database';
import { ROOT, startNode, type ServerHandle } from './processes';

export const ISSUER = 'http://bench.local';
export const ADMIN_USERNAME = 'bench-admin';
export const ADMIN_PASSWORD = 'bench-admin-password-0123456789';

export interface ServiceSettings {
  masterKey: string;
  bcryptCost: number;
  poolSize: number;
  /** Extra node flags, e.g. --cpu-prof when profiling. */
  nodeArgs?: string[];
}

/**
 * The node flags `npm start` gives the service (package.json), so the bench runs it as operators do.
 * The floors get them too: the same runtime is part of "the same stack".
 */
export function startFlags(): string[] {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const match = /^node((?: --[\w-]+(?:=\S+)?)*) dist\/main\.js$/.exec(start);
  if (!match) throw new Error(`package.json's start script is not "node [--flag[=value] ...] dist/main.js": ${start}`);
  return match[1]!.split(' ').filter(Boolean);
}

/** The real service, built: node dist/main.js, production mode, rate limits off, on `db`; `env` adds or overrides variables. */
export function startService(label: string, db: string, s: ServiceSettings, env: Record<string, string> = {}): Promise<ServerHandle> {
  return startNode(
    label,
    path.join(ROOT, 'dist', 'main.js'),
    {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(db),
      DATABASE_POOL_SIZE: String(s.poolSize),
      MASTER_KEY: s.masterKey,
      BCRYPT_COST: String(s.bcryptCost),
      RATE_LIMIT_ENABLED: 'false',
      LOG_LEVEL: 'warn',
      ISSUER,
      BOOTSTRAP_ADMIN_USERNAME: ADMIN_USERNAME,
      BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ...env,
    },
    s.nodeArgs,
  );
}

export async function call<T>(baseUrl: string, method: string, route: string, init: { token?: string; json?: unknown; form?: Record<string, string> }): Promise<T> {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(`${baseUrl}${route}`, { method, headers, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

export interface TokenResponse {
  access_token: string;
  refresh_token: string;
}

export const passwordGrant = (baseUrl: string) =>
  call<TokenResponse>(baseUrl, 'POST', '/api/auth/bearer/token', { form: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD } });

export const exchange = (baseUrl: string, requestToken: string) =>
  call<TokenResponse>(baseUrl, 'POST', '/api/v1/auth/token', { json: { jwt: requestToken } });

/** A viewer key made through the API, with `policy` in the create when given; answers its appkey. */
export async function createKey(baseUrl: string, adminToken: string, appname: string, policy?: Record<string, unknown>): Promise<string> {
  const created = await call<{ data: { appkey: string } }>(baseUrl, 'POST', '/api/v1/api-keys', {
    token: adminToken,
    json: { appname, description: `Benchmark key ${appname}`, roles: ['viewer'], ...(policy && { policy }) },
  });
  return created.data.appkey;
}

export async function publicJwk(baseUrl: string): Promise<unknown> {
  const set = await call<{ keys: unknown[] }>(baseUrl, 'GET', '/.well-known/jwks.json', {});
  return set.keys[0];
}

/** Runs fn over items with at most `limit` in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}
