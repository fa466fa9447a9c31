/* global process, console, Buffer -- run by Node, which ESLint is not told for .mjs files */
// Part of npm run build: writes dist/pglite-template.tar.gz, an empty embedded database dumped once,
// with dist/pglite-template.json naming the PGlite version that made it. The service unpacks it into a
// new data folder instead of having PGlite create the database (0.8 to 1.3 s instead of 2.2 to 2.9 s
// here: docs/performance.md, "starting"). Made only when missing or made by another PGlite version,
// so a rebuild after a source change does not pay the ~3 s again.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const archive = join(root, 'dist', 'pglite-template.tar.gz');
const stamp = join(root, 'dist', 'pglite-template.json');
const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
const version = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version;

const made = existsSync(stamp) && existsSync(archive) ? JSON.parse(readFileSync(stamp, 'utf8')).pglite : undefined;
if (made === version) process.exit(0);

const { PGlite } = await import('@electric-sql/pglite');
const db = await PGlite.create('memory://');
const dump = await db.dumpDataDir('gzip');
await db.close();
writeFileSync(archive, Buffer.from(await dump.arrayBuffer()));
writeFileSync(stamp, `${JSON.stringify({ pglite: version })}\n`);
console.log(`embedded database template: dist/pglite-template.tar.gz (PGlite ${version}, ${(dump.size / 1024 / 1024).toFixed(1)} MiB)`);
