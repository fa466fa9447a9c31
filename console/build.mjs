/* global process, console -- run by Node, which ESLint is not told for .mjs files */
// Builds the admin console into dist/console/ (or --outdir DIR): index.html and hashed, minified
// assets under assets/. Fails when the JavaScript passes its budget of 80 KiB gzipped.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const outdirArg = process.argv.indexOf('--outdir');
const outdir = resolve(outdirArg > 0 ? process.argv[outdirArg + 1] : join(root, 'dist', 'console'));
const JS_BUDGET_GZIP = 80 * 1024;

// Only what this script wrote before: dist/console/ also holds the server's compiled src/console/.
rmSync(join(outdir, 'assets'), { recursive: true, force: true });
rmSync(join(outdir, 'index.html'), { force: true });
mkdirSync(join(outdir, 'assets'), { recursive: true });

const result = await build({
  entryPoints: { app: join(here, 'src', 'main.tsx') },
  outdir: join(outdir, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  absWorkingDir: root,
});

const outputs = Object.entries(result.metafile.outputs);
const [jsPath, entry] = outputs.find(([, o]) => o.entryPoint !== undefined) ?? [];
if (!jsPath || !entry?.cssBundle) throw new Error('console build: no script or stylesheet came out');
const href = (file) => `/console/assets/${basename(file)}`;
const template = readFileSync(join(here, 'src', 'index.html'), 'utf8');
writeFileSync(
  join(outdir, 'index.html'),
  template.replace('%STYLESHEET%', href(entry.cssBundle)).replace('%SCRIPT%', href(jsPath)),
);

const gzipped = (file) => gzipSync(readFileSync(resolve(root, file)), { level: 9 }).length;
const jsBytes = outputs.filter(([file]) => file.endsWith('.js')).reduce((sum, [file]) => sum + gzipped(file), 0);
const cssBytes = gzipped(entry.cssBundle);
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`console: ${relative(root, outdir) || '.'} — JavaScript ${kib(jsBytes)} gzipped, CSS ${kib(cssBytes)} gzipped`);
if (jsBytes > JS_BUDGET_GZIP) {
  console.error(`console: the JavaScript is over its budget of ${kib(JS_BUDGET_GZIP)} gzipped`);
  process.exit(1);
}
