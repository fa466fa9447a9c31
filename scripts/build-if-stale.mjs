/* global process, console -- run by Node, which ESLint is not told for .mjs files */
// `npm install` (the prepare step) and `npm start` (prestart) run this: it builds dist/ with
// `npm run build` only when dist/ is missing or a file it is built from is newer than the last build,
// so a second `npm start` starts at once. `--stamp`, the last step of `npm run build`, records the
// build's time in dist/.build-stamp. Walking the sources' times takes a few milliseconds.
//
// A production install (`npm ci --omit=dev`) has no TypeScript: there it builds nothing and says so,
// and the service starts from the dist/ that was copied in (the Docker image builds in a stage of its own).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(root, 'dist', '.build-stamp');
/**
 * What dist/ is built from: the server, the console, the API reference, their build settings and the
 * dependencies. Not migrations/ nor assets/: the service reads those from the repository at run time.
 */
const SOURCES = ['src', 'console', 'api-reference', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];

if (process.argv.includes('--stamp')) {
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  process.exit(0);
}

/** The first file under `path` changed after `since` (milliseconds), or undefined. */
function newerThan(path, since) {
  if (!existsSync(path)) return undefined;
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs > since ? path : undefined;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    const found = newerThan(join(path, entry), since);
    if (found) return found;
  }
  return undefined;
}

const builtAt = existsSync(STAMP) ? statSync(STAMP).mtimeMs : undefined;
const changed = builtAt === undefined ? undefined : SOURCES.map((source) => newerThan(join(root, source), builtAt)).find(Boolean);
if (builtAt !== undefined && !changed) process.exit(0);

const why = changed ? `${relative(root, changed)} changed since the last build` : 'dist/ is not built yet';
const starting = process.env.npm_lifecycle_event === 'prestart';
if (!existsSync(join(root, 'node_modules', 'typescript'))) {
  // A production install: nothing to build with.
  if (builtAt !== undefined || !starting) {
    console.log(`build skipped (${why}): TypeScript is not installed, as in a production install (npm ci --omit=dev)`);
    process.exit(0);
  }
  console.error(`${why}, and TypeScript is not installed to build it: run npm install (with dev dependencies), or copy in a built dist/`);
  process.exit(1);
}

console.log(`building dist/ (${why})`);
// Within an npm script, npm_execpath is npm's own CLI: the same npm, whatever is first on PATH.
const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
const build = spawnSync(npm[0], [...npm[1], 'run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
process.exit(build.status ?? 1);
