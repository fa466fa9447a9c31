/** Starts the service as a child process in a fresh PostgreSQL schema, and tears both down. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';

export interface StartedService {
  url: string;
  pid: number;
  adminUsername: string;
  adminPassword: string;
  /** pino lines at level warn or above (40+), and anything not JSON, as printed by the service. */
  logLines: string[];
  /** SIGTERM, then the exit code (null: killed after the grace period). */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  dropSchema(): Promise<void>;
}

const ROOT = path.resolve(__dirname, '..', '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
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

async function waitReady(url: string, child: ChildProcess, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the service exited during start (code ${child.exitCode}, signal ${child.signalCode}):\n${output()}`);
    }
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1_000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the service was not ready within ${timeoutMs / 1000} s:\n${output()}`);
}

export async function startService(databaseUrl: string): Promise<StartedService> {
  const schema = `soak_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await withClient(databaseUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
  const dropSchema = () => withClient(databaseUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined);

  const port = await freePort();
  const adminUsername = 'soak-admin';
  const adminPassword = randomBytes(18).toString('base64url');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: withSearchPath(databaseUrl, schema),
    MASTER_KEY: randomBytes(32).toString('base64'),
    BCRYPT_COST: '10',
    RATE_LIMIT_ENABLED: 'false',
    BOOTSTRAP_ADMIN_USERNAME: adminUsername,
    BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
    LOG_LEVEL: 'warn',
    // Ignore a developer's .env: the run's configuration is exactly this environment.
    DOTENV_CONFIG_PATH: '/dev/null',
    // No DATA_DIR use with DATABASE_URL and MASTER_KEY set; point it away from the repository anyway.
    DATA_DIR: path.join(ROOT, 'data', 'soak-unused'),
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logLines: string[] = [];
  let tail = '';
  const onLine = (line: string) => {
    if (!line.trim()) return;
    tail = (tail + line + '\n').slice(-4_000);
    try {
      const entry = JSON.parse(line) as { level?: number };
      if ((entry.level ?? 0) >= 40) logLines.push(line);
    } catch {
      logLines.push(line);
    }
  };
  for (const stream of [child.stdout, child.stderr]) {
    let buffered = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (d: string) => {
      buffered += d;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      lines.forEach(onLine);
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );

  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url, child, 60_000, () => tail);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    await dropSchema();
    throw err;
  }

  return {
    url,
    pid: child.pid as number,
    adminUsername,
    adminPassword,
    logLines,
    dropSchema,
    async stop() {
      const started = Date.now();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // The service's own SHUTDOWN_TIMEOUT is 10 s; give it a little more before killing it.
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const result = await exited;
      clearTimeout(killer);
      return { ...result, ms: Date.now() - started };
    },
  };
}
