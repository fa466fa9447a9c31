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
    .describe('`production` refuses to start without `DATABASE_URL` and `MASTER_KEY`, and asks an admin token for `/metrics` on the main port'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('HTTP port (0: any free port, which the `listening` log line names)'),
  HOST: z.string().default('0.0.0.0').describe('Listen address; `127.0.0.1` keeps the service to this machine'),
  DATA_DIR: z
    .string()
    .default('./data')
    .describe(
      'The embedded database and, without `MASTER_KEY`, the generated master key and the first admin\'s password file (git-ignored); made `0700` with owner-only files at every start. Its absolute path may be at most 93 bytes (the embedded database\'s Unix socket lives in it)',
    ),
  ISSUER: z
    .string()
    .url()
    .optional()
    .describe(
      '`iss` of every token and the base of every URL in the metadata; set it to the address clients use. A request token\'s optional `aud` must equal it (on `/oauth2/token` it may also be that endpoint\'s URL). Unset: `http://localhost:<PORT>`',
    ),
  AUDIENCE: z.string().min(1).optional().describe('`aud` of access tokens: configure every resource server with it. Unset: the issuer'),
  DEFAULT_CLIENT_ID: z
    .string()
    .regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 visible ASCII characters')
    .default('public')
    .describe("The `client_id` of a user's tokens when the login named none, and the client their refresh tokens are bound to; 1 to 64 visible ASCII characters"),
  PUBLIC_CLIENT_IDS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((id) => id.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[\x21-\x2b\x2d-\x7e]{1,64}$/, 'each must be 1 to 64 visible ASCII characters (no comma)')))
    .describe(
      'Comma-separated public clients a password or refresh grant may name as `client_id` beside `DEFAULT_CLIENT_ID` and, while it is served, the console\'s own `console` (default none); any other `client_id` must be an API key that authenticates',
    ),
  TRUST_PROXY: trustProxy.describe(
    'Express `trust proxy`, which decides the client address of rate limits, the audit trail and `last_ip`: `false`, a hop count (the number of proxies in front), `loopback`, or a comma-separated list of the proxies\' addresses or CIDR ranges (`10.0.0.0/8,192.168.1.5`). `true` is refused at start: any client could forge `X-Forwarded-For`',
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('The lowest level logged (pino, one JSON line per event)'),
  SHUTDOWN_TIMEOUT: z.coerce.number().int().min(0).default(10).describe('Seconds in-flight requests get after SIGTERM or SIGINT before their connections are closed'),
  METRICS_ENABLED: flag('false').describe('`true` collects Prometheus metrics and serves them at `GET /metrics`; `false` collects nothing, and `/metrics` answers 404 saying how to turn them on'),
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe('Serve `/metrics` on this port, by a server of its own without a token, instead of the main port, so it need not be public. Unset: on the main port'),
  METRICS_HOST: z.string().min(1).default('127.0.0.1').describe('Where the `METRICS_PORT` server listens, whatever `HOST` is: this machine only unless set (e.g. `0.0.0.0` for a Prometheus in another container)'),
  CONSOLE_ENABLED: flag('true').describe('Serve the admin console at `/console/` (and redirect `/` to it); `false`: every path under it is 404'),
  CONSOLE_DIR: z
    .string()
    .min(1)
    .optional()
    .describe('Where the built console is read from at start. Unset: `dist/console`, beside the compiled server; set it when running from source (`npm run dev`), e.g. `dist/console` after `npm run build`'),
  API_REFERENCE_ENABLED: flag('true').describe('Serve the API reference (the OpenAPI document rendered by Swagger UI) at `/api-reference/`; `false`: every path under it is 404'),
  API_REFERENCE_DIR: z
    .string()
    .min(1)
    .optional()
    .describe('Where the built API reference is read from at start. Unset: `dist/api-reference`, beside the compiled server; set it when running from source, e.g. `dist/api-reference` after `npm run build`'),
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
    // Beside the compiled config: dist/config/, dist/console/ and dist/api-reference/.
    console: Object.freeze({ enabled: e.CONSOLE_ENABLED === 'true', dir: e.CONSOLE_DIR ?? join(__dirname, '..', 'console') }),
    apiReference: Object.freeze({ enabled: e.API_REFERENCE_ENABLED === 'true', dir: e.API_REFERENCE_DIR ?? join(__dirname, '..', 'api-reference') }),
  };
}
