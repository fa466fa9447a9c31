import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export interface BuiltConsole {
  /** Holds index.html and assets/, as dist/console does after npm run build. */
  dir: string;
  remove: () => void;
}

/**
 * Builds the console the way `npm run build` does (console/build.mjs, esbuild) into a folder of its
 * own, so a test serves a real bundle of the current source whether or not dist/ exists or is stale.
 * About a second. Pass `dir` as CONSOLE_DIR.
 */
export function buildConsole(): BuiltConsole {
  const dir = mkdtempSync(path.join(tmpdir(), 'console-build-'));
  execFileSync(process.execPath, [path.join(ROOT, 'console', 'build.mjs'), '--outdir', dir], { cwd: ROOT, stdio: 'pipe' });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Builds the API reference the way `npm run build` does (api-reference/build.mjs: Swagger UI's files,
 * hashed and gzipped) into a folder of its own. Pass `dir` as API_REFERENCE_DIR.
 */
export function buildApiReference(): BuiltConsole {
  const dir = mkdtempSync(path.join(tmpdir(), 'api-reference-build-'));
  execFileSync(process.execPath, [path.join(ROOT, 'api-reference', 'build.mjs'), '--outdir', dir], { cwd: ROOT, stdio: 'pipe' });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
