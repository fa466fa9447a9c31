/** Starts the service as a child process in a fresh PostgreSQL schema, and tears both down. */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { REPOSITORY_ROOT, SERVICE_FROM_SOURCE, startNodeProcess, type NodeProcess } from '../harness/node-process';

export interface StartedService {
  url: string;
  pid: number;
  /** The fresh schema it runs in, on `databaseUrl`. */
  schema: string;
  adminUsername: string;
  adminPassword: string;
  /** pino lines at level warn or above (40+), and anything not JSON, as printed by the service. */
  logLines: string[];
  /** SIGTERM, then the exit code (null: killed after the grace period). */
  stop: NodeProcess['stop'];
  dropSchema(): Promise<void>;
}

function withSearchPath(databaseUrl: string, schema: string): string {
  const url = new URL(databaseUrl);
  const existing = url.searchParams.get('options');
  url.searchParams.delete('options');
  const options = [existing, `-c search_path=${schema}`].filter(Boolean).join(' ');
  const sep = url.search ? '&' : '?';
  return `${url.toString()}${sep}options=${encodeURIComponent(options)}`;
}

async function withClient<T>(databaseUrl: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function startService(databaseUrl: string, lifetimes: { sessionTtlS: number; maintenanceIntervalS: number }): Promise<StartedService> {
  const schema = `soak_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await withClient(databaseUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
  const dropSchema = () => withClient(databaseUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined);

  const adminUsername = 'soak-admin';
  const adminPassword = randomBytes(18).toString('base64url');
  const env = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATABASE_URL: withSearchPath(databaseUrl, schema),
    MASTER_KEY: randomBytes(32).toString('base64'),
    BCRYPT_COST: '10',
    RATE_LIMIT_ENABLED: 'false',
    BOOTSTRAP_ADMIN_USERNAME: adminUsername,
    BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
    LOG_LEVEL: 'warn',
    // Short lifetimes, so sessions end and are pruned while the load runs (the table stays bounded).
    SESSION_MAX_TTL: String(lifetimes.sessionTtlS),
    REFRESH_TOKEN_TTL: String(lifetimes.sessionTtlS),
    ACCESS_TOKEN_TTL: String(Math.max(1, Math.floor(lifetimes.sessionTtlS / 2))),
    MAINTENANCE_INTERVAL_SECONDS: String(lifetimes.maintenanceIntervalS),
    // Ignore a developer's .env: the run's configuration is exactly this environment.
    DOTENV_CONFIG_PATH: '/dev/null',
    // No DATA_DIR use with DATABASE_URL and MASTER_KEY set; point it away from the repository anyway.
    DATA_DIR: path.join(REPOSITORY_ROOT, 'data', 'soak-unused'),
  };
  const logLines: string[] = [];
  const keepWarnings = (line: string) => {
    if (!line.trim()) return;
    try {
      const entry = JSON.parse(line) as { level?: number };
      if ((entry.level ?? 0) >= 40) logLines.push(line);
    } catch {
      logLines.push(line);
    }
  };
  const service = await startNodeProcess({
    label: 'the service',
    ...SERVICE_FROM_SOURCE,
    env,
    readyPath: '/readyz',
    // The first start compiles the sources through tsx: give it longer than a test does.
    readyWithinMs: 60_000,
    onLine: keepWarnings,
  }).catch(async (err: unknown) => {
    await dropSchema();
    throw err;
  });

  return {
    url: service.baseUrl,
    pid: service.pid,
    schema,
    adminUsername,
    adminPassword,
    logLines,
    dropSchema,
    stop: service.stop,
  };
}
