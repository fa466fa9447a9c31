import { execFile } from 'node:child_process';
import { appendFile, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MIGRATIONS_DIR, migrationFiles } from '../../../src/db/migrate';

/**
 * The build dumps a migrated embedded database (src/db/pglite-template-maker.ts) that a first start
 * unpacks instead of creating and migrating one (docs/performance.md, "Starting"). A template made
 * from fewer migrations is still used and the migrator applies the rest; one made from a migration
 * that has changed since is not used at all. Each step runs in a process of its own
 * (pglite-template-runner.ts), as PGlite does not load inside Jest.
 */
jest.setTimeout(240_000);

const RUNNER = path.join(__dirname, 'pglite-template-runner.ts');
let root: string;
let templateDir: string;
let migrationsDir: string;
let all: string[];

async function run<T>(...args: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', RUNNER, ...args], { maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
}
const make = () => run<number | null>('make', templateDir, migrationsDir);
const firstStart = async () =>
  run<{ applied: string[]; recorded: string[]; messages: string[] }>('first-start', templateDir, migrationsDir, await mkdtemp(path.join(root, 'data-')));
const UNPACKED = "a new embedded database, unpacked from the build's template";

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'tpl-'));
  templateDir = path.join(root, 'template');
  migrationsDir = path.join(root, 'migrations');
  await mkdir(templateDir);
  await mkdir(migrationsDir);
  all = await migrationFiles(MIGRATIONS_DIR);
  // The template is made before the last migration exists.
  for (const file of all.slice(0, -1)) await copyFile(path.join(MIGRATIONS_DIR, file), path.join(migrationsDir, file));
  expect(await make()).toBeGreaterThan(0);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the embedded database template', () => {
  it('when the migrations are those it was made from, then a first start applies none, and making it again makes nothing', async () => {
    const start = await firstStart();

    expect(start.applied).toEqual([]);
    expect(start.recorded).toEqual(all.slice(0, -1));
    expect(start.messages).toContain(UNPACKED);
    expect(await make()).toBeNull();
  });

  it('when a migration was added after it was made, then a first start unpacks it and applies only the new one; the build then makes it again', async () => {
    const last = all.at(-1)!;
    await copyFile(path.join(MIGRATIONS_DIR, last), path.join(migrationsDir, last));

    const start = await firstStart();

    expect(start.applied).toEqual([last]);
    expect(start.recorded).toEqual(all);
    expect(start.messages).toContain(UNPACKED);
    expect(await make()).toBeGreaterThan(0);
    expect((await firstStart()).applied).toEqual([]);
  });

  it('when its archive is damaged, then a first start says so and creates the database instead, with every migration applied', async () => {
    const archive = path.join(templateDir, 'pglite-template.tar.gz');
    const whole = await readFile(archive);
    await writeFile(archive, whole.subarray(0, whole.length >> 1));

    const start = await firstStart();
    await writeFile(archive, whole);

    expect(start.applied).toEqual(all);
    expect(start.recorded).toEqual(all);
    expect(start.messages).toContain('the embedded database template did not unpack; creating the database instead');
    expect(start.messages).not.toContain(UNPACKED);
  });

  it('when a migration it was made from has changed since, then it is not used: the database is created and every migration applied', async () => {
    await appendFile(path.join(migrationsDir, all[0]!), '\n-- changed after the template was made\n');

    const start = await firstStart();

    expect(start.applied).toEqual(all);
    expect(start.recorded).toEqual(all);
    expect(start.messages).not.toContain(UNPACKED);
    expect(start.messages).toContain("the build's embedded database template is not used");
  });
});
