import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import path from 'node:path';
import { createTestDatabase, testPoolSize, type TestDatabase } from '../../helpers/database';

export interface ServerProcess {
  baseUrl: string;
  /** DATABASE_URL and MASTER_KEY it runs with; pass as `joinDatabaseOf` to start a second instance. */
  database: Record<string, string>;
  child: ChildProcess;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  output: () => string;
  /** Kills the process if still running and drops the database it created. */
  cleanup: () => Promise<void>;
}

const ROOT = path.resolve(__dirname, '../../..');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

/**
 * The real service as its own OS process (src/main.ts through tsx), on a fresh schema of the test
 * database, listening on a free loopback port. Resolves once /readyz answers 200.
 */
export async function startServerProcess(
  env: Record<string, string> = {},
  options: {
    /** Run with no DATABASE_URL and no MASTER_KEY: the embedded PGlite and generated key in this folder. */
    embeddedDataDir?: string;
    /** Share the database and MASTER_KEY of a running instance. */
    joinDatabaseOf?: ServerProcess;
    /** Connect through this database (e.g. behind a TcpProxy); the caller creates and drops it. */
    database?: TestDatabase;
  } = {},
): Promise<ServerProcess> {
  const owned = !options.embeddedDataDir && !options.joinDatabaseOf && !options.database ? await createTestDatabase() : undefined;
  const given = owned ?? options.database;
  const database: Record<string, string> = options.joinDatabaseOf?.database ??
    (given ? { DATABASE_URL: given.url, MASTER_KEY: randomBytes(32).toString('base64') } : { DATA_DIR: options.embeddedDataDir ?? '' });

  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      PORT: String(port),
      HOST: '127.0.0.1',
      BCRYPT_COST: '4',
      LOG_LEVEL: 'warn',
      // As in startTestApp: tests that are about rate limits turn them on.
      RATE_LIMIT_ENABLED: 'false',
      DATABASE_POOL_SIZE: String(testPoolSize(10)),
      ...database,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited during start:\n${output}`);
    const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`server not ready within 30 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    baseUrl,
    database,
    child,
    exited,
    output: () => output,
    async cleanup() {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      await owned?.drop();
    },
  };
}
