import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createLogger } from '../logger';
import { Database } from './database';
import { migrate } from './migrate';
import { archiveOf, BUILD_TEMPLATE, currentStamp, readStamp, stampOf, type TemplatePlace } from './pglite-template';

/**
 * Part of npm run build (scripts/pglite-template.mjs): dumps a new embedded database with every
 * migration applied, for the service to unpack into a new data folder (src/db/pglite-template.ts).
 * Made only when missing or made from another PGlite version or other migrations, so a rebuild after
 * a source change does not pay for it again. Returns the archive's size when it made one.
 *
 * Only what the migrations write is in it: the schema, the audit retention's default and the
 * migrations' record. Whatever is one installation's own (the master key, the signing keys, the first
 * admin, the audit trail) is made at the first start, as before. The migrations run through the same
 * driver and migrator as at a start, so the template holds what a first start would have made.
 */
export async function makePgliteTemplate(place: TemplatePlace = BUILD_TEMPLATE): Promise<number | undefined> {
  const wanted = await currentStamp(place.migrations);
  if (!wanted) throw new Error('@electric-sql/pglite is not installed');
  if (isDeepStrictEqual(await readStamp(place), wanted)) return undefined;
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const pg = await PGlite.create('memory://');
  const socketDir = await mkdtemp(path.join(tmpdir(), 'pglite-template-'));
  try {
    const server = new PGLiteSocketServer({ db: pg, path: path.join(socketDir, '.s.PGSQL.5432') });
    await server.start();
    const logger = createLogger('silent');
    const db = new Database({ url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`, poolSize: 1 }, logger);
    try {
      const applied = await migrate(db, logger, place.migrations);
      const expected = wanted.migrations.map((m) => m.name);
      if (!isDeepStrictEqual(applied, expected)) throw new Error(`applied ${applied.join(', ')} instead of ${expected.join(', ')}`);
    } finally {
      await db.close();
      await server.stop();
    }
    // Written to the data files, so the first start does not replay the migrations from the WAL.
    await pg.exec('CHECKPOINT');
    const dump = Buffer.from(await (await pg.dumpDataDir('gzip')).arrayBuffer());
    // The stamp last, and only once the archive is whole: an archive without it is never used.
    await rm(stampOf(place), { force: true });
    await writeFile(archiveOf(place), dump);
    await writeFile(stampOf(place), `${JSON.stringify(wanted, null, 2)}\n`);
    return dump.length;
  } finally {
    await pg.close();
    await rm(socketDir, { recursive: true, force: true });
  }
}
