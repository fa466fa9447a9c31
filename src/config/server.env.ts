import { join } from 'node:path';
import { z } from 'zod';
import { flag, type EnvOf } from './env-kit';
import { trustProxy } from './trust-proxy';

/** The client_id the admin console's tokens are issued to (console/src/session.ts). */
export const CONSOLE_CLIENT_ID = 'console';

/** The process, its HTTP server, its names (issuer, audience), and what it serves beside the API. */
export const serverEnv = {
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .default('development')
    .describe('`production` refuses to start without `DATABASE_URL` and `MASTER_KEY`'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('HTTP port, 0 to 65535 (0: any free port)'),
  HOST: z.string().default('0.0.0.0').describe('Listen address'),
  DATA_DIR: z
    .string()
    .default('./data')
    .describe('Embedded database and, without `MASTER_KEY`, the generated master key; made `0700` with owner-only files at every start'),
  ISSUER: z
    .string()
    .url()
    .optional()
    .describe(
      '`iss` of every token and the base of every URL in the metadata (default `http://localhost:<PORT>`); a request token\'s optional `aud` must equal it',
    ),
  AUDIENCE: z.string().min(1).optional().describe('`aud` of access tokens (default: the issuer); configure every resource server with it'),
  DEFAULT_CLIENT_ID: z
    .string()
    .regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 visible ASCII characters')
    .default('public')
    .describe("The `client_id` of a user's tokens when the login named none, 1 to 64 visible ASCII characters"),
  PUBLIC_CLIENT_IDS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((id) => id.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[\x21-\x2b\x2d-\x7e]{1,64}$/, 'each must be 1 to 64 visible ASCII characters (no comma)')))
    .describe(
      'Comma-separated public clients a password or refresh grant may name as `client_id` beside `DEFAULT_CLIENT_ID` and, while it is served, the console\'s own `console` (default none); any other `client_id` must be an API key that authenticates',
    ),
  TRUST_PROXY: trustProxy.describe(
    'Express `trust proxy`: `false`, a hop count, `loopback`, or a comma-separated list of the proxies\' addresses or CIDR ranges; `true` is refused',
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino log level'),
  SHUTDOWN_TIMEOUT: z.coerce.number().int().min(0).default(10).describe('Seconds in-flight requests get after SIGTERM or SIGINT'),
  METRICS_ENABLED: flag('false').describe('`true` collects Prometheus metrics and serves them at `GET /metrics`'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional().describe('Serve `/metrics` on this port by a separate server instead of the main port'),
  METRICS_HOST: z.string().min(1).default('127.0.0.1').describe('Where the `METRICS_PORT` server listens'),
  CONSOLE_ENABLED: flag('true').describe('Serve the admin console at `/console/`; `false`: every path under it is 404'),
  CONSOLE_DIR: z.string().min(1).optional().describe('Where the built console is read from (default `dist/console` beside the compiled server)'),
};

export function serverSettings(e: EnvOf<typeof serverEnv>) {
  const issuer = (e.ISSUER ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    dataDir: e.DATA_DIR,
    issuer,
    audience: e.AUDIENCE ?? issuer,
    defaultClientId: e.DEFAULT_CLIENT_ID,
    // The console is a public client of the service's own, under its own name, while it is served.
    publicClientIds: Object.freeze([...new Set([e.DEFAULT_CLIENT_ID, ...(e.CONSOLE_ENABLED === 'true' ? [CONSOLE_CLIENT_ID] : []), ...e.PUBLIC_CLIENT_IDS])]),
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    shutdownTimeoutSeconds: e.SHUTDOWN_TIMEOUT,
    metrics: Object.freeze({ enabled: e.METRICS_ENABLED === 'true', port: e.METRICS_PORT, host: e.METRICS_HOST }),
    // Beside the compiled config: dist/config/ and dist/console/.
    console: Object.freeze({ enabled: e.CONSOLE_ENABLED === 'true', dir: e.CONSOLE_DIR ?? join(__dirname, '..', 'console') }),
  };
}
