/**
 * `npm run docs:examples`: runs every shell example of README.md and docs/ against a freshly started
 * service with no configuration (the embedded database in a new data folder), as a reader would
 * paste them: page by page in reading order (README.md, then docs/ in the order the README links
 * its pages, then any other page), each page in a shell of its own, each block twice in a row, each output it
 * claims checked both times. The convention, for anyone writing a page (docs/development.md):
 *
 * - Every ```sh (or bash, shell) block runs, unless the line just above it is
 *   `<!-- not run: <reason> -->` (it needs a second service, Docker, minutes...).
 * - A trailing comment on a command is the output it claims: `curl ... | json .scope   # api-keys:read`;
 *   `...` inside a claim stands for anything. Explanations go on comment lines of their own.
 * - `localhost:3000` and `data/` in a block are pointed at the service started here, and a `read` of
 *   the admin password from standard input gets the first start's.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPOSITORY_ROOT, startNodeProcess } from './harness/node-process';
import { blocksOf, scriptFor, type Block } from './docs-examples/blocks';

const DOCS = path.join(REPOSITORY_ROOT, 'docs');

/** README.md, then the pages of docs/ in the order the README links to them, then every other page under docs/. */
export function pagesInReadingOrder(): string[] {
  const all = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? all(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []));
  const readme = path.join(REPOSITORY_ROOT, 'README.md');
  const linked = [...readFileSync(readme, 'utf8').matchAll(/\]\((docs\/[^)#\s]+\.md)(?:#[^)]*)?\)/g)].map((m) => path.join(REPOSITORY_ROOT, m[1]!));
  return [...new Set([readme, ...linked, ...all(DOCS).sort()])].filter(existsSync);
}

const relative = (file: string) => path.relative(REPOSITORY_ROOT, file);

async function main(): Promise<void> {
  const began = Date.now();
  if (!existsSync(path.join(REPOSITORY_ROOT, 'dist', 'main.js'))) throw new Error('dist/ is not built: run npm run build (npm install does it) first');
  const blocks = pagesInReadingOrder().flatMap((file) => blocksOf(relative(file), readFileSync(file, 'utf8')));
  const work = mkdtempSync(path.join(tmpdir(), 'docs-examples-'));
  const dataDir = path.join(work, 'data');
  const start = (JSON.parse(readFileSync(path.join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ');
  // npm start's command without npm, on a free port, with nothing configured but where its data goes.
  const service = await startNodeProcess({
    label: 'the service',
    script: start.at(-1)!,
    nodeArgs: start.slice(1, -1),
    env: { DATA_DIR: dataDir },
    readyPath: '/readyz',
    readyWithinMs: 60_000,
  });
  let failed = false;
  let ran = 0;
  try {
    await startLogComplete(service.output, 10_000);
    checkStartLog(service.output(), dataDir, service.port);
    for (const [file, page] of groupByPage(blocks)) {
      const run = page.filter((b) => !b.notRun);
      if (!run.length) continue;
      const result = await runPage(scriptFor(run, { port: service.port, dataDir }), readFileSync(path.join(dataDir, 'first-admin-password'), 'utf8').trim());
      if (result.code !== 0) {
        failed = true;
        process.stderr.write(`\n${file}: an example failed (${result.code === null ? 'stopped after 3 minutes' : `exit ${result.code}`})\n--- output ---\n${result.output}\n`);
        break;
      }
      ran += run.length;
      console.log(`${file}: ${run.length} block(s) ran twice, every claimed output as written`);
    }
  } finally {
    await service.stop();
    if (failed) process.stderr.write(`\n--- the service's log ---\n${service.output()}\n`);
    rmSync(work, { recursive: true, force: true });
  }
  const notRun = blocks.filter((b) => b.notRun);
  console.log(`\ndocs examples: ${ran} of ${blocks.length - notRun.length} block(s) ran, each twice${failed ? ' (stopped at the first failure)' : ''}; ${notRun.length} not run:`);
  for (const b of notRun) console.log(`  - ${b.file}:${b.line}: ${b.notRun}`);
  console.log(`(${((Date.now() - began) / 1000).toFixed(1)} s)`);
  if (failed) process.exitCode = 1;
}

/**
 * One page's script in bash, in a process group of its own: past its time the whole group is
 * killed, whatever the examples started (a forgotten `<!-- not run -->` must not leave a process behind).
 * Its standard input holds the admin password, line after line, for a block that asks for it with `read`.
 */
function runPage(script: string, adminPassword: string, limitMs = 180_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: REPOSITORY_ROOT, detached: true, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    child.stdin.end(`${adminPassword}\n`.repeat(100));
    let output = '';
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), limitMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGKILL'); // anything an example left running in the background
      } catch {
        // the group is gone: nothing was left
      }
      resolve({ code, output });
    });
  });
}

function groupByPage(blocks: Block[]): Map<string, Block[]> {
  const pages = new Map<string, Block[]>();
  for (const b of blocks) pages.set(b.file, [...(pages.get(b.file) ?? []), b]);
  return pages;
}

/**
 * The pages' line is written just after the service answers (the server is listening first), so a
 * check made the moment /readyz answers can come before it: wait for it, and let the check say what is missing.
 */
async function startLogComplete(output: () => string, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  while (!/"msg":"ready: /.test(output()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}

/** What the README promises of the first start: the admin password in a file the log names (never the password), and the pages' URLs. */
function checkStartLog(log: string, dataDir: string, port: number): void {
  const passwordFile = path.join(dataDir, 'first-admin-password');
  const password = existsSync(passwordFile) ? readFileSync(passwordFile, 'utf8').trim() : '';
  const problems = [
    !password && `no generated admin password in ${passwordFile}`,
    password && log.includes(password) && 'the log holds the admin password',
    !log.includes(passwordFile) && 'the log does not name the admin password file',
    !log.includes(`http://localhost:${port}/console/`) && "the log does not name the console's URL",
    !log.includes(`http://localhost:${port}/api-reference/`) && "the log does not name the API reference's URL",
  ].filter(Boolean);
  if (problems.length) throw new Error(`the first start: ${problems.join('; ')}\n${log}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`docs examples: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
