import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';

/** One built file, held in memory: the whole console is a few tens of KiB. */
export interface ConsoleFile {
  readonly body: Buffer;
  readonly contentType: string;
}

/** What `npm run build` wrote: the page, and its assets by hashed name. */
export interface ConsoleFiles {
  readonly index: ConsoleFile;
  readonly assets: ReadonlyMap<string, ConsoleFile>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json; charset=utf-8',
};

/**
 * Reads the built console once, at start. Only index.html and the files of assets/ are ever served:
 * the same folder also holds this module compiled (dist/console/*.js), which is no business of a browser.
 * Undefined when nothing is built there.
 */
export function loadConsoleFiles(dir: string): ConsoleFiles | undefined {
  const indexPath = join(dir, 'index.html');
  if (!existsSync(indexPath)) return undefined;
  const assetsDir = join(dir, 'assets');
  const assets = new Map<string, ConsoleFile>();
  for (const name of existsSync(assetsDir) ? readdirSync(assetsDir) : []) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType) assets.set(name, { body: readFileSync(join(assetsDir, name)), contentType });
  }
  return { index: { body: readFileSync(indexPath), contentType: 'text/html; charset=utf-8' }, assets };
}
