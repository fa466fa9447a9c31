import { z } from 'zod';
import { wholeSeconds, type EnvOf } from './env-kit';

/** Where the data lives, how the service talks to it, and how long what it keeps is kept. */
export const databaseEnv = {
  DATABASE_URL: z.string().url().optional().describe('PostgreSQL URL (`postgres://user:password@host:5432/database`). Unset: the embedded PostgreSQL (PGlite) in `DATA_DIR`, for trying the service out (refused in production)'),
  MIGRATION_DATABASE_URL: z
    .string()
    .url()
    .optional()
    .describe('Run the migrations (at start and `npm run migrate`) over this URL, as the role that owns the schema, while `DATABASE_URL` may be a role that owns nothing ([database roles](operations.md#database-roles)); only with `DATABASE_URL`. Unset: migrations run over `DATABASE_URL`'),
  DATABASE_RUNTIME_ROLE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/, 'must be a PostgreSQL role name (letters, digits, _ and $, at most 63)')
    .optional()
    .describe(
      "The role the service runs as, which the migrations grant to (default: the user of `DATABASE_URL` when `MIGRATION_DATABASE_URL` is set); name it per deployment, e.g. `<deployment>_runtime`",
    ),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10).describe('Connections in the pool, 1 to 100'),
  DATABASE_CONNECT_TIMEOUT: wholeSeconds(5).describe('Seconds to wait for a connection before answering 503'),
  DATABASE_STATEMENT_TIMEOUT: wholeSeconds(10).describe('Seconds one statement may run before answering 503: set on the server per connection, plus a client-side bound of this + 2 s; with `DATABASE_POOLING=transaction` only the client-side bound (set `statement_timeout` on the role)'),
  DATABASE_POOLING: z
    .enum(['session', 'transaction'])
    .default('session')
    .describe('`transaction` when PgBouncer (`pool_mode = transaction`) sits in front of PostgreSQL: no named prepared statements, no per-connection settings (a `DATABASE_URL` with `options` is then refused)'),
  MAINTENANCE_INTERVAL_SECONDS: wholeSeconds(60).describe('Seconds between two pruning rounds (ended sessions, spent replay records, ended graces, audit events past their retention), run by one instance at a time'),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(0).default(400).describe('Audit events older than this many days are deleted; `0` keeps every event. Written into the database at start, as the schema owner: with several instances the one started last sets it for all, so give them the same value'),
};

/** The user a PostgreSQL URL logs in as, if it names one. */
const userOf = (url: string | undefined) => (url && URL.canParse(url) ? decodeURIComponent(new URL(url).username) || undefined : undefined);

/**
 * The role the migrations grant to: the one named, else the service's own login when migrations run
 * as another (the owner). Undefined when one role does everything: it needs no grants.
 */
function runtimeRoleOf(e: EnvOf<typeof databaseEnv>): string | undefined {
  if (e.DATABASE_RUNTIME_ROLE) return e.DATABASE_RUNTIME_ROLE;
  const runtime = userOf(e.DATABASE_URL);
  return e.MIGRATION_DATABASE_URL && runtime !== userOf(e.MIGRATION_DATABASE_URL) ? runtime : undefined;
}

export function databaseSettings(e: EnvOf<typeof databaseEnv>) {
  return {
    databaseUrl: e.DATABASE_URL,
    migrationDatabaseUrl: e.MIGRATION_DATABASE_URL,
    runtimeRole: runtimeRoleOf(e),
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseConnectTimeout: e.DATABASE_CONNECT_TIMEOUT,
    databaseStatementTimeout: e.DATABASE_STATEMENT_TIMEOUT,
    databasePooling: e.DATABASE_POOLING,
    maintenanceIntervalSeconds: e.MAINTENANCE_INTERVAL_SECONDS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
  };
}
