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
    MIGRATION_DATABASE_URL: z.string().url().optional(),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
    DATABASE_CONNECT_TIMEOUT: wholeSeconds(5),
    DATABASE_STATEMENT_TIMEOUT: wholeSeconds(10),
    DATABASE_POOLING: z.enum(['session', 'transaction']).default('session'),
    MAINTENANCE_INTERVAL_SECONDS: wholeSeconds(60),
    AUDIT_RETENTION_DAYS: z.coerce.number().int().min(0).default(400),
    DATA_DIR: z.string().default('./data'),
    ISSUER: z.string().url().optional(),
    AUDIENCE: z.string().min(1).optional(),
    DEFAULT_CLIENT_ID: z.string().regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 visible ASCII characters').default('public'),
    MASTER_KEY: masterKey,
    MASTER_KEY_PREVIOUS: masterKey,
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
    RATE_LIMIT_PASSWORD_ADDRESS_FAILURES: count(30),
    RATE_LIMIT_PASSWORD_WINDOW: wholeSeconds(900),
    LOGIN_ACCOUNT_ALERT: count(50),
    RATE_LIMIT_BEARER_FAILURES: count(300),
    RATE_LIMIT_BEARER_WINDOW: wholeSeconds(60),
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
  if (env.DATABASE_POOLING === 'transaction' && env.DATABASE_URL && URL.canParse(env.DATABASE_URL) && new URL(env.DATABASE_URL).searchParams.has('options')) {
    // PgBouncer refuses the start-up parameter, and a setting made per connection would not follow
    // the client from one transaction to the next.
    problems.push(
      'DATABASE_URL: its options parameter sets per-connection settings, which DATABASE_POOLING=transaction cannot keep; ' +
        'set them on the role or database instead (ALTER ROLE ... SET search_path = ...)',
    );
  }
  if (env.MASTER_KEY_PREVIOUS && !env.MASTER_KEY) {
    problems.push('MASTER_KEY_PREVIOUS: only with MASTER_KEY (the new key); it holds the old key while `npm run cli -- keys rewrap` runs');
  }
  if (env.MIGRATION_DATABASE_URL && !env.DATABASE_URL) {
    problems.push('MIGRATION_DATABASE_URL: only with DATABASE_URL (the embedded database has a single role)');
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
  /**
   * Where migrations run when set: a role that owns the schema, while databaseUrl may be a role that
   * owns nothing (README, "Security model").
   */
  readonly migrationDatabaseUrl: string | undefined;
  readonly databasePoolSize: number;
  /** Seconds to wait for a connection, and for one statement, before answering 503. */
  readonly databaseConnectTimeout: number;
  readonly databaseStatementTimeout: number;
  /**
   * `transaction` when a pooler such as PgBouncer in `pool_mode = transaction` sits in front of
   * PostgreSQL: then each transaction may run on another server connection, so the service keeps no
   * state on a connection (no named prepared statements, no settings made per connection).
   */
  readonly databasePooling: 'session' | 'transaction';
  /** Seconds between two pruning rounds (ended sessions, spent replay records, ended graces, old audit events). */
  readonly maintenanceIntervalSeconds: number;
  /** Audit events older than this many days are deleted; 0 keeps every event. */
  readonly auditRetentionDays: number;
  readonly dataDir: string;
  readonly issuer: string;
  /** The `aud` of access tokens: every resource server checks it (AUDIENCE, default the issuer). */
  readonly audience: string;
  /** The client a user's tokens are for when the login named none (DEFAULT_CLIENT_ID). */
  readonly defaultClientId: string;
  /** 32 raw bytes; undefined means "load or generate one in dataDir" (refused in production). */
  readonly masterKey: Buffer | undefined;
  /** The key before the last rotation: opens what it sealed until `keys rewrap` re-seals it under masterKey. */
  readonly masterKeyPrevious: Buffer | undefined;
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
  /** Failed password logins per username and client address (never per username alone: no lockout by strangers). */
  readonly passwordFailures: RateLimitRule;
  /** Failed password logins per client address, whatever the username; the same window. */
  readonly passwordAddressFailures: RateLimitRule;
  /** Past this many failed logins of one username from all addresses in the window, its attempts are slowed and an alert raised. */
  readonly accountAlert: number;
  /** Refused bearer tokens per client address on bearer-protected routes. */
  readonly bearerFailures: RateLimitRule;
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
    migrationDatabaseUrl: e.MIGRATION_DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseConnectTimeout: e.DATABASE_CONNECT_TIMEOUT,
    databaseStatementTimeout: e.DATABASE_STATEMENT_TIMEOUT,
    databasePooling: e.DATABASE_POOLING,
    maintenanceIntervalSeconds: e.MAINTENANCE_INTERVAL_SECONDS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    dataDir: e.DATA_DIR,
    issuer,
    audience: e.AUDIENCE ?? issuer,
    defaultClientId: e.DEFAULT_CLIENT_ID,
    masterKey: e.MASTER_KEY,
    masterKeyPrevious: e.MASTER_KEY_PREVIOUS,
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
      passwordAddressFailures: { limit: e.RATE_LIMIT_PASSWORD_ADDRESS_FAILURES, windowSeconds: e.RATE_LIMIT_PASSWORD_WINDOW },
      accountAlert: e.LOGIN_ACCOUNT_ALERT,
      bearerFailures: { limit: e.RATE_LIMIT_BEARER_FAILURES, windowSeconds: e.RATE_LIMIT_BEARER_WINDOW },
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
