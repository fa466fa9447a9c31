import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { MIGRATIONS_DIR, migrationFiles } from './migrate';
import { unpackNow } from './untar';

/** Where a template is: its folder (the build's is dist/) and the migrations it is judged against. */
export interface TemplatePlace {
  dir: string;
  migrations: string;
}

/** Beside the compiled db/ folder: dist/pglite-template.tar.gz and its .json, written by npm run build. */
export const BUILD_TEMPLATE: TemplatePlace = { dir: path.join(__dirname, '..'), migrations: MIGRATIONS_DIR };

export const archiveOf = (place: TemplatePlace) => path.join(place.dir, 'pglite-template.tar.gz');
export const stampOf = (place: TemplatePlace) => path.join(place.dir, 'pglite-template.json');

/** What a template was made from: the PGlite version, and each migration applied in it by name and content. */
export interface TemplateStamp {
  pglite: string;
  migrations: { name: string; sha256: string }[];
}

export function installedPgliteVersion(): string | undefined {
  try {
    const entry = require.resolve('@electric-sql/pglite');
    return (JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}

/** The stamp a template made now from `migrationsDir` would carry. */
export async function currentStamp(migrationsDir: string): Promise<TemplateStamp | undefined> {
  const pglite = installedPgliteVersion();
  if (!pglite) return undefined;
  const migrations = await Promise.all(
    (await migrationFiles(migrationsDir)).map(async (name) => ({
      name,
      sha256: createHash('sha256').update(await readFile(path.join(migrationsDir, name))).digest('hex'),
    })),
  );
  return { pglite, migrations };
}

export async function readStamp(place: TemplatePlace): Promise<Partial<TemplateStamp> | undefined> {
  if (!existsSync(archiveOf(place)) || !existsSync(stampOf(place))) return undefined;
  return JSON.parse(await readFile(stampOf(place), 'utf8')) as Partial<TemplateStamp>;
}

/**
 * The migrated database the build dumped (scripts/pglite-template.mjs), to unpack into a new data
 * folder rather than have PGlite create one and the migrator fill it, which is most of a first start
 * (docs/performance.md, "Starting"). Usable only when made by the installed PGlite version from the
 * first migrations of today's folder, byte for byte and in order: then the migrator applies the rest,
 * as it would have in the same order on a new database. Otherwise `unusable` says why (PGlite then
 * creates the database itself); undefined when there is no template (running from source).
 */
export async function pgliteTemplate(place: TemplatePlace = BUILD_TEMPLATE): Promise<{ archive: string } | { unusable: string } | undefined> {
  const made = await readStamp(place);
  if (!made) return undefined;
  const current = await currentStamp(place.migrations);
  if (!current || made.pglite !== current.pglite) return { unusable: `made by PGlite ${made.pglite ?? '(unknown)'}, not the installed ${current?.pglite ?? '(none)'}` };
  const applied = made.migrations ?? [];
  const changed = applied.find((m, i) => current.migrations[i]?.name !== m.name || current.migrations[i]?.sha256 !== m.sha256);
  if (changed || !made.migrations) return { unusable: `made from other migrations than those in ${place.migrations}${changed ? ` (${changed.name})` : ''}: npm run build remakes it` };
  return { archive: archiveOf(place) };
}

/**
 * Unpacks the template into `pgdata` (untar.ts, unpackNow). In a worker thread (unpack-worker.ts), so
 * that it truly runs beside PGlite's loading, whose long synchronous stretches would otherwise hold
 * up each of its thousand file writes between them (docs/performance.md, "Starting"). From source
 * (tsx), where a worker cannot load TypeScript, on this thread.
 */
export async function unpackTemplate(archive: string, pgdata: string): Promise<void> {
  if (path.extname(__filename) !== '.js') return unpackNow(archive, pgdata);
  await new Promise<void>((resolve, reject) => {
    const worker = new Worker(path.join(__dirname, 'unpack-worker.js'), { workerData: { archive, pgdata } });
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the unpacking stopped (exit code ${code})`))));
  });
}
