/* global process, console, Buffer -- run by Node, which ESLint is not told for .mjs files */
// Builds the API reference into dist/api-reference/ (or --outdir DIR): Swagger UI's prebuilt bundle and
// stylesheet (the devDependency swagger-ui-dist), our start-up script and stylesheet, each under a
// hashed name with a gzip copy beside it, an index.html that loads them (nothing inline: the page runs
// under the console's strict CSP), and files.json, the list of what the service may serve.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const outdirArg = process.argv.indexOf('--outdir');
const outdir = resolve(outdirArg > 0 ? process.argv[outdirArg + 1] : join(root, 'dist', 'api-reference'));
const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const swaggerVersion = JSON.parse(readFileSync(join(swaggerDir, 'package.json'), 'utf8')).version;

const TYPES = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.txt': 'text/plain; charset=utf-8' };

// Only what this script wrote before: dist/api-reference/ also holds the server's compiled src/api-reference/.
for (const name of ['assets', 'index.html', 'files.json']) rmSync(join(outdir, name), { recursive: true, force: true });
mkdirSync(join(outdir, 'assets'), { recursive: true });

/** The bundles end by naming a source map that is not shipped; a browser's developer tools would ask for it in vain. */
const withoutSourceMap = (text) => text.replace(/\n\/[/*]# sourceMappingURL=\S+\s*(\*\/)?\s*$/, '\n');

const sources = [
  ['swagger-ui.css', withoutSourceMap(readFileSync(join(swaggerDir, 'swagger-ui.css'), 'utf8'))],
  ['swagger-ui-bundle.js', withoutSourceMap(readFileSync(join(swaggerDir, 'swagger-ui-bundle.js'), 'utf8'))],
  ['page.css', readFileSync(join(here, 'src', 'page.css'), 'utf8')],
  ['init.js', readFileSync(join(here, 'src', 'init.js'), 'utf8')],
];

const files = {};
const hashedNames = {};
let html = readFileSync(join(here, 'src', 'index.html'), 'utf8');
for (const [name, text] of sources) {
  const body = Buffer.from(text);
  const dot = name.lastIndexOf('.');
  const hashed = `${name.slice(0, dot)}-${createHash('sha256').update(body).digest('hex').slice(0, 10)}${name.slice(dot)}`;
  writeFileSync(join(outdir, 'assets', hashed), body);
  writeFileSync(join(outdir, 'assets', `${hashed}.gz`), gzipSync(body, { level: 9 }));
  files[hashed] = { type: TYPES[name.slice(dot)], immutable: true, gzip: true };
  hashedNames[name] = hashed;
  html = html.replace(`%${name}%`, `/api-reference/assets/${hashed}`);
}
if (/%[\w.-]+%/.test(html)) throw new Error(`api-reference build: a placeholder is left in index.html: ${/%[\w.-]+%/.exec(html)[0]}`);
writeFileSync(join(outdir, 'index.html'), html);

// Swagger UI is Apache-2.0 and its bundle holds other packages: their notices travel with it, at the
// name the bundle's own header comment points to.
const notices = [
  `Swagger UI ${swaggerVersion} (swagger-ui-dist), Apache License 2.0`,
  readFileSync(join(swaggerDir, 'NOTICE'), 'utf8'),
  readFileSync(join(swaggerDir, 'LICENSE'), 'utf8'),
  'Packages bundled in swagger-ui-bundle.js:',
  readFileSync(join(swaggerDir, 'swagger-ui-bundle.js.LICENSE.txt'), 'utf8'),
].join('\n\n');
writeFileSync(join(outdir, 'assets', 'swagger-ui-bundle.js.LICENSE.txt'), notices);
files['swagger-ui-bundle.js.LICENSE.txt'] = { type: TYPES['.txt'], immutable: false, gzip: false };
writeFileSync(join(outdir, 'files.json'), `${JSON.stringify({ swaggerUi: swaggerVersion, assets: files }, null, 2)}\n`);

const kib = (name) => `${(readFileSync(join(outdir, 'assets', `${hashedNames[name]}.gz`)).length / 1024).toFixed(0)} KiB`;
console.log(
  `api reference: ${relative(root, outdir) || '.'} — Swagger UI ${swaggerVersion}, JavaScript ${kib('swagger-ui-bundle.js')} gzipped, CSS ${kib('swagger-ui.css')} gzipped`,
);
