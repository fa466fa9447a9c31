import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Beside the compiled db/ folder: dist/pglite-template.tar.gz and its .json, written by npm run build. */
const ARCHIVE = path.join(__dirname, '..', 'pglite-template.tar.gz');
const STAMP = path.join(__dirname, '..', 'pglite-template.json');

function installedPgliteVersion(): string | undefined {
  try {
    const entry = require.resolve('@electric-sql/pglite');
    return (JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}

/**
 * The empty database the build dumped (scripts/pglite-template.mjs), to unpack into a new data folder
 * rather than have PGlite create one, which is most of a first start (docs/performance.md,
 * "starting"). Undefined when there is none (running from source), or when another PGlite version
 * made it: then PGlite creates the database itself, as it would anyway.
 */
export async function pgliteTemplate(): Promise<Blob | undefined> {
  if (!existsSync(ARCHIVE) || !existsSync(STAMP)) return undefined;
  const made = (JSON.parse(await readFile(STAMP, 'utf8')) as { pglite?: string }).pglite;
  if (!made || made !== installedPgliteVersion()) return undefined;
  return new Blob([await readFile(ARCHIVE)]);
}
