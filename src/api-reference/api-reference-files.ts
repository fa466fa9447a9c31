import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One built file, read when first asked for (Swagger UI's bundle is 1.7 MiB; most processes never serve it). */
export interface ReferenceFile {
  readonly path: string;
  readonly contentType: string;
  /** Hashed name: a browser may keep it for good. */
  readonly immutable: boolean;
  /** A gzip copy beside it (`<path>.gz`), sent to clients that accept gzip. */
  readonly gzip: boolean;
}

/** What `npm run build` wrote (api-reference/build.mjs): the page, and its assets by name. */
export interface ReferenceFiles {
  readonly index: ReferenceFile;
  readonly assets: ReadonlyMap<string, ReferenceFile>;
}

interface Manifest {
  assets: Record<string, { type: string; immutable: boolean; gzip: boolean }>;
}

/**
 * Reads the build's list of files (files.json) once, at start, and nothing else: only the files it
 * names are ever served, so the compiled server beside them (dist/api-reference/*.js) never is.
 * Undefined when nothing is built there.
 */
export function loadReferenceFiles(dir: string): ReferenceFiles | undefined {
  const manifestPath = join(dir, 'files.json');
  if (!existsSync(manifestPath) || !existsSync(join(dir, 'index.html'))) return undefined;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  const assets = new Map<string, ReferenceFile>();
  for (const [name, file] of Object.entries(manifest.assets)) {
    assets.set(name, { path: join(dir, 'assets', name), contentType: file.type, immutable: file.immutable, gzip: file.gzip });
  }
  return { index: { path: join(dir, 'index.html'), contentType: 'text/html; charset=utf-8', immutable: false, gzip: false }, assets };
}
