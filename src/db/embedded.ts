import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger';

export interface EmbeddedPostgres {
  /** A postgres:// URL the ordinary pg driver connects to. */
  url: string;
  stop: () => Promise<void>;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite keeps its files in one directory that only one process may open. A pid file refuses a
 * second opener (a CLI call while the server runs) instead of letting both corrupt the data.
 */
async function lockDirectory(dir: string): Promise<() => Promise<void>> {
  const lockFile = path.join(dir, 'embedded.pid');
  try {
    await writeFile(lockFile, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const holder = Number((await readFile(lockFile, 'utf8')).trim());
    if (holder && holder !== process.pid && isRunning(holder)) {
      throw new Error(
        `The embedded database in ${dir} is in use by process ${holder}. Stop it first, or set DATABASE_URL to share a PostgreSQL server.`,
      );
    }
    await writeFile(lockFile, String(process.pid));
  }
  return () => rm(lockFile, { force: true });
}

/**
 * Starts PGlite (PostgreSQL compiled to WebAssembly) on `dataDir`, served on a loopback port so the
 * same pg driver, SQL and migrations serve it as any PostgreSQL server.
 */
export async function startEmbeddedPostgres(dataDir: string, maxConnections: number, logger: Logger): Promise<EmbeddedPostgres> {
  const dir = path.resolve(dataDir);
  await mkdir(dir, { recursive: true });
  const unlock = await lockDirectory(dir);
  try {
    // Loaded only here, so a deployment on a real PostgreSQL never pays for the WebAssembly module.
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    const db = await PGlite.create(path.join(dir, 'pgdata'));
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
    await server.start();
    const url = `postgres://postgres@${server.getServerConn()}/postgres`;
    logger.info({ dataDir: dir }, 'using the embedded PostgreSQL (PGlite); set DATABASE_URL for a PostgreSQL server');
    return {
      url,
      async stop() {
        await server.stop();
        await db.close();
        await unlock();
      },
    };
  } catch (err) {
    await unlock();
    throw err;
  }
}
