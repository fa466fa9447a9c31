import { chmodSync, existsSync, lstatSync, readdirSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger';
import { BUILD_TEMPLATE, pgliteTemplate, unpackTemplate, type TemplatePlace } from './pglite-template';

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

/** PostgreSQL names its socket `.s.PGSQL.<port>` in the socket directory; the driver looks there. */
const SOCKET_PORT = 5432;
const SOCKET_FILE = `.s.PGSQL.${SOCKET_PORT}`;
/** sun_path holds 108 bytes on Linux, the last one a NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Takes every permission of group and others away from `dir` and everything under it: a folder
 * made by an older version, or copied in, may hold world-writable files (PGlite's file system layer
 * creates some 0644/0666 whatever the umask). Synchronous on purpose: it runs at start, before
 * anything is served, and a thousand lstat calls take ~5 ms against 20 to 70 ms (and far more on a
 * busy machine) as many trips through the thread pool.
 */
function makePrivate(dir: string): void {
  const visit = (file: string): void => {
    const stats = lstatSync(file);
    if (stats.isSymbolicLink()) return;
    if (stats.mode & 0o077) chmodSync(file, stats.mode & 0o700);
    if (stats.isDirectory()) for (const entry of readdirSync(file)) visit(path.join(file, entry));
  };
  visit(dir);
}

/** The database's own folder inside DATA_DIR. */
const pgdataOf = (dataDir: string) => path.join(path.resolve(dataDir), 'pgdata');

/**
 * Whether DATA_DIR holds an embedded database yet: false before the first start, which creates it,
 * and while its folder is empty (made by a first start that stopped before the database was in).
 */
export function embeddedDatabaseExists(dataDir: string): boolean {
  const pgdata = pgdataOf(dataDir);
  return existsSync(pgdata) && readdirSync(pgdata).length > 0;
}

type PGlitePackage = Pick<typeof import('@electric-sql/pglite'), 'PGlite'> & Pick<typeof import('@electric-sql/pglite/nodefs'), 'NodeFS'>;

/**
 * PGlite's file system on `pgdata`, held shut until `ready`: PGlite compiles its WebAssembly and lays
 * out its own files first, and looks into the data folder only after initialSyncFs (its hook for a
 * file system to bring its files in), so the template is unpacked meanwhile rather than before.
 */
function filesOnce(NodeFS: PGlitePackage['NodeFS'], pgdata: string, ready: Promise<void>) {
  return new (class extends NodeFS {
    override async initialSyncFs(): Promise<void> {
      await ready;
      return super.initialSyncFs();
    }
  })(pgdata);
}

/**
 * Opens the data folder's database. A new one is unpacked from the build's template when there is a
 * usable one: the schema already migrated, in well under half the time PGlite needs to create an
 * empty database (docs/performance.md, "Starting"). A template that fails to unpack or to open is set
 * aside, and PGlite creates the database itself (the migrator then fills it).
 */
async function openDatabase({ PGlite, NodeFS }: PGlitePackage, dataDir: string, logger: Logger, place: TemplatePlace) {
  const pgdata = pgdataOf(dataDir);
  const template = embeddedDatabaseExists(dataDir) ? undefined : await pgliteTemplate(place);
  if (template && 'unusable' in template) logger.info({ cause: template.unusable }, "the build's embedded database template is not used");
  if (!template || !('archive' in template)) return PGlite.create(pgdata);
  const unpacked = unpackTemplate(template.archive, pgdata);
  // Handled here too: a failure may come before PGlite awaits it, and must not end the process.
  unpacked.catch(() => undefined);
  try {
    const db = await PGlite.create({ dataDir: pgdata, fs: filesOnce(NodeFS, pgdata, unpacked) });
    logger.info({ pgdata }, "a new embedded database, unpacked from the build's template");
    return db;
  } catch (err) {
    logger.warn({ cause: (err as Error).message }, 'the embedded database template did not unpack; creating the database instead');
    // Settled before anything is removed: the unpacking must not rename its folder in afterwards.
    await unpacked.catch(() => undefined);
    await rm(pgdata, { recursive: true, force: true });
    return PGlite.create(pgdata);
  }
}

/**
 * Starts PGlite (PostgreSQL compiled to WebAssembly) on `dataDir`, served on a Unix socket inside
 * that folder so the same pg driver, SQL and migrations serve it as any PostgreSQL server.
 *
 * PGlite has no passwords: whoever reaches its socket is the superuser. So no TCP port (any local
 * user could connect to one), the folder is 0700, and every file in it is the owner's alone
 * (fixed at start, and kept so by a 077 umask while it runs): only this user's processes get in.
 * `template`: where a new database is unpacked from (the build's, unless a test says otherwise).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  maxConnections: number,
  logger: Logger,
  template: TemplatePlace = BUILD_TEMPLATE,
): Promise<EmbeddedPostgres> {
  const dir = path.resolve(dataDir);
  const socketPath = path.join(dir, SOCKET_FILE);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `DATA_DIR: ${dir} is too long a path for the embedded database's Unix socket (${SOCKET_FILE} inside it may be at most ${MAX_SOCKET_PATH_BYTES} bytes); choose a shorter DATA_DIR`,
    );
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const unlock = await lockDirectory(dir);
  const previousUmask = process.umask(0o077);
  try {
    makePrivate(dir);
    // Loaded only here, so a deployment on a real PostgreSQL never pays for the WebAssembly module.
    const { PGlite } = await import('@electric-sql/pglite');
    const { NodeFS } = await import('@electric-sql/pglite/nodefs');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    const db = await openDatabase({ PGlite, NodeFS }, dir, logger, template);
    // PGlite makes some files of its own readable by all (pg_internal.init, at every start), whatever the umask.
    makePrivate(dir);
    // Left behind by a process that was killed: the lock says it is gone, so the socket is stale.
    await rm(socketPath, { force: true });
    const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections });
    await server.start();
    await chmod(socketPath, 0o600);
    // `host` as a directory: the driver connects to <host>/.s.PGSQL.<port> (5432 by default).
    const url = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(dir)}`;
    logger.info({ dataDir: dir }, 'using the embedded PostgreSQL (PGlite); set DATABASE_URL for a PostgreSQL server');
    return {
      url,
      async stop() {
        await server.stop();
        await db.close();
        await unlock();
        process.umask(previousUmask);
      },
    };
  } catch (err) {
    process.umask(previousUmask);
    await unlock();
    throw err;
  }
}
