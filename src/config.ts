import { isIP } from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';

const wholeSeconds = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

const TRUST_PROXY_INSTEAD =
  'set the number of proxies in front of the service (a hop count, e.g. 1), loopback, or a comma-separated list of ' +
  "the proxies' addresses or CIDR ranges (e.g. 10.0.0.0/8,192.168.1.5)";

/** The names Express (proxy-addr) knows for address ranges, beside addresses and CIDR ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, an address/prefix length (or /netmask for IPv4), or a range name proxy-addr knows. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  if (family === 4 && isIP(prefix) === 4) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY follows Express's `trust proxy` setting: `false`, a hop count, or a comma-separated
 * list of addresses/subnets (or `loopback`). Kept as the value Express expects. `true` is refused:
 * it trusts every hop, so any client could forge X-Forwarded-For and with it the address that
 * rate limits, the audit trail and last_ip rely on.
 */
const trustProxy = z
  .string()
  .default('false')
  .transform((v) => v.trim())
  .superRefine((v, ctx) => {
    if (v.toLowerCase() === 'true') {
      ctx.addIssue({ code: 'custom', message: `true would trust every hop, so any client could forge X-Forwarded-For; ${TRUST_PROXY_INSTEAD}` });
    } else if (v !== 'false' && v !== '' && !/^\d+$/.test(v) && !v.split(',').every((entry) => isProxyAddress(entry.trim()))) {
      ctx.addIssue({ code: 'custom', message: `must be false, a hop count, loopback, or a comma-separated list of addresses or CIDR ranges; ${TRUST_PROXY_INSTEAD}` });
    }
  })
  .transform((v): false | number | string => {
    if (v === 'false' || v === '') return false;
    if (/^\d+$/.test(v)) return Number(v);
    return v
      .split(',')
      .map((entry) => entry.trim())
      .join(',');
  });

const masterKey = z
  .string()
  .optional()
  .refine((v) => v === undefined || v === '' || Buffer.from(v, 'base64').length === 32, {
    message: 'must be 32 bytes encoded in base64 (try: openssl rand -base64 32)',
  })
  .transform((v) => (v ? Buffer.from(v, 'base64') : undefined));

const envSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().default('0.0.0.0'),
    DATABASE_URL: z.string().url().optional(),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
    DATABASE_CONNECT_TIMEOUT: wholeSeconds(5),
    DATABASE_STATEMENT_TIMEOUT: wholeSeconds(10),
    DATA_DIR: z.string().default('./data'),
    ISSUER: z.string().url().optional(),
    AUDIENCE: z.string().min(1).optional(),
    DEFAULT_CLIENT_ID: z.string().regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 visible ASCII characters').default('public'),
    MASTER_KEY: masterKey,
    ACCESS_TOKEN_TTL: wholeSeconds(300),
    REFRESH_TOKEN_TTL: wholeSeconds(1800),
    SESSION_MAX_TTL: wholeSeconds(36000),
    CLOCK_TOLERANCE: z.coerce.number().int().min(0).max(30).default(30),
    BCRYPT_COST: z.coerce.number().int().min(4).max(15).default(12),
    BOOTSTRAP_ADMIN_USERNAME: z.string().optional(),
    BOOTSTRAP_ADMIN_PASSWORD: z.string().optional(),
    TRUST_PROXY: trustProxy,
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SHUTDOWN_TIMEOUT: z.coerce.number().int().min(0).default(10),
    RATE_LIMIT_ENABLED: z.enum(['true', 'false']).default('true'),
    RATE_LIMIT_PASSWORD_FAILURES: count(10),
    RATE_LIMIT_PASSWORD_WINDOW: wholeSeconds(900),
    RATE_LIMIT_TOKEN_REQUESTS: count(300),
    RATE_LIMIT_TOKEN_WINDOW: wholeSeconds(60),
    RATE_LIMIT_KEY_REQUESTS: count(1200),
    RATE_LIMIT_KEY_WINDOW: wholeSeconds(60),
    REDIS_URL: z.string().url().optional(),
    RATE_LIMIT_REDIS_PREFIX: z.string().min(1).default('apikeys:rl:'),
    METRICS_ENABLED: z.enum(['true', 'false']).default('false'),
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    CONSOLE_ENABLED: z.enum(['true', 'false']).default('true'),
    CONSOLE_DIR: z.string().min(1).optional(),
  });

/**
 * Rules across variables, checked on the raw environment so they are reported together with any
 * per-variable problem (a zod refine would stay silent once one field failed).
 */
function crossVariableProblems(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  if (!env.BOOTSTRAP_ADMIN_USERNAME !== !env.BOOTSTRAP_ADMIN_PASSWORD) {
    problems.push('BOOTSTRAP_ADMIN_PASSWORD: BOOTSTRAP_ADMIN_USERNAME and BOOTSTRAP_ADMIN_PASSWORD must be set together');
  }
  if (env.NODE_ENV === 'production') {
    // The embedded database and a generated master key are for trying the service out, not for production.
    if (!env.DATABASE_URL) problems.push('DATABASE_URL: required when NODE_ENV=production (postgres://user:pass@host:5432/db)');
    if (!env.MASTER_KEY) problems.push('MASTER_KEY: required when NODE_ENV=production (try: openssl rand -base64 32)');
  }
  return problems;
}

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  readonly databasePoolSize: number;
  /** Seconds to wait for a connection, and for one statement, before answering 503. */
  readonly databaseConnectTimeout: number;
  readonly databaseStatementTimeout: number;
  readonly dataDir: string;
  readonly issuer: string;
  /** The `aud` of access tokens: every resource server checks it (AUDIENCE, default the issuer). */
  readonly audience: string;
  /** The client a user's tokens are for when the login named none (DEFAULT_CLIENT_ID). */
  readonly defaultClientId: string;
  /** 32 raw bytes; undefined means "load or generate one in dataDir" (refused in production). */
  readonly masterKey: Buffer | undefined;
  readonly accessTokenTtl: number;
  readonly refreshTokenTtl: number;
  readonly sessionMaxTtl: number;
  /** Leeway, in seconds, for exp/iat checks on every token we verify. */
  readonly clockTolerance: number;
  readonly bcryptCost: number;
  readonly bootstrapAdmin: { readonly username: string; readonly password: string } | undefined;
  /** Express `trust proxy`: false, a hop count, or the proxies' addresses (never true: see trustProxy). */
  readonly trustProxy: false | number | string;
  readonly logLevel: string;
  readonly shutdownTimeoutSeconds: number;
  readonly rateLimits: RateLimitSettings;
  readonly metrics: MetricsSettings;
  readonly console: ConsoleSettings;
}

export interface ConsoleSettings {
  /** Whether /console/ is served at all (CONSOLE_ENABLED); off, every path under it is 404. */
  readonly enabled: boolean;
  /**
   * The built console (index.html and assets/), as `npm run build` writes it: dist/console, beside
   * the compiled server, unless CONSOLE_DIR says otherwise (tests, and `npm run dev`, run from src/,
   * where nothing is built).
   */
  readonly dir: string;
}

export interface MetricsSettings {
  readonly enabled: boolean;
  /** GET /metrics is served on this port by a server of its own when set, on the main port otherwise. */
  readonly port: number | undefined;
  /**
   * Where that server listens: 127.0.0.1 unless METRICS_HOST says otherwise, since scraping needs no
   * token and the metrics tell an attacker about traffic and load.
   */
  readonly host: string;
}

export interface RateLimitRule {
  readonly limit: number;
  readonly windowSeconds: number;
}

export interface RateLimitSettings {
  readonly enabled: boolean;
  /** Failed password logins, counted per username and per client address. */
  readonly passwordFailures: RateLimitRule;
  /** All requests to the three token routes, per client address. */
  readonly tokenRoutes: RateLimitRule;
  /** Key operations, per authenticated principal. */
  readonly keyOperations: RateLimitRule;
  /** Counters live in Redis (shared by every instance) when set, in memory otherwise. */
  readonly redisUrl: string | undefined;
  readonly redisPrefix: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  const problems = [
    ...(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`)),
    ...crossVariableProblems(env),
  ];
  if (!parsed.success || problems.length) throw new ConfigError(problems);
  const e = parsed.data;
  const issuer = (e.ISSUER ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseConnectTimeout: e.DATABASE_CONNECT_TIMEOUT,
    databaseStatementTimeout: e.DATABASE_STATEMENT_TIMEOUT,
    dataDir: e.DATA_DIR,
    issuer,
    audience: e.AUDIENCE ?? issuer,
    defaultClientId: e.DEFAULT_CLIENT_ID,
    masterKey: e.MASTER_KEY,
    accessTokenTtl: e.ACCESS_TOKEN_TTL,
    refreshTokenTtl: e.REFRESH_TOKEN_TTL,
    sessionMaxTtl: e.SESSION_MAX_TTL,
    clockTolerance: e.CLOCK_TOLERANCE,
    bcryptCost: e.BCRYPT_COST,
    bootstrapAdmin:
      e.BOOTSTRAP_ADMIN_USERNAME && e.BOOTSTRAP_ADMIN_PASSWORD
        ? Object.freeze({ username: e.BOOTSTRAP_ADMIN_USERNAME, password: e.BOOTSTRAP_ADMIN_PASSWORD })
        : undefined,
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    shutdownTimeoutSeconds: e.SHUTDOWN_TIMEOUT,
    rateLimits: Object.freeze({
      enabled: e.RATE_LIMIT_ENABLED === 'true',
      passwordFailures: { limit: e.RATE_LIMIT_PASSWORD_FAILURES, windowSeconds: e.RATE_LIMIT_PASSWORD_WINDOW },
      tokenRoutes: { limit: e.RATE_LIMIT_TOKEN_REQUESTS, windowSeconds: e.RATE_LIMIT_TOKEN_WINDOW },
      keyOperations: { limit: e.RATE_LIMIT_KEY_REQUESTS, windowSeconds: e.RATE_LIMIT_KEY_WINDOW },
      redisUrl: e.REDIS_URL,
      redisPrefix: e.RATE_LIMIT_REDIS_PREFIX,
    }),
    metrics: Object.freeze({ enabled: e.METRICS_ENABLED === 'true', port: e.METRICS_PORT, host: e.METRICS_HOST }),
    // Beside this file once compiled: dist/config.js and dist/console/.
    console: Object.freeze({ enabled: e.CONSOLE_ENABLED === 'true', dir: e.CONSOLE_DIR ?? join(__dirname, 'console') }),
  });
}
