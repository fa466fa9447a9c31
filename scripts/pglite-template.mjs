/* global console -- run by Node, which ESLint is not told for .mjs files */
// Part of npm run build, after tsc: writes dist/pglite-template.tar.gz, a new embedded database with
// every migration applied, and dist/pglite-template.json naming what made it (the PGlite version and
// each migration's digest). The service unpacks it into a new data folder instead of having PGlite
// create the database and the migrator fill it: docs/performance.md, "Starting". The work is in
// src/db/pglite-template-maker.ts; it makes nothing when the template is up to date.
import { createRequire } from 'node:module';

const { makePgliteTemplate } = createRequire(import.meta.url)('../dist/db/pglite-template-maker.js');
const bytes = await makePgliteTemplate();
if (bytes !== undefined) {
  console.log(`embedded database template: dist/pglite-template.tar.gz (migrated, ${(bytes / 1024 / 1024).toFixed(1)} MiB)`);
}
