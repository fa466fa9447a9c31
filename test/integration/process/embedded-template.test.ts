import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPOSITORY_ROOT, startNodeProcess } from '../../../scripts/harness/node-process';
import { describeUnless } from '../../helpers/skips';

/**
 * The built service's first start on a new data folder unpacks the embedded database from the
 * template npm run build dumped (dist/pglite-template.tar.gz, docs/performance.md "starting")
 * instead of having PGlite create it: the folder must come out as private and as usable as one
 * PGlite made, and open again on the next start.
 */
const BUILT = ['dist/main.js', 'dist/pglite-template.tar.gz', 'dist/pglite-template.json'].every((file) => existsSync(path.join(REPOSITORY_ROOT, file)));
if (!BUILT && process.env.CI === 'true') throw new Error('dist/ is not built with its embedded database template: npm run build');

async function openToOthers(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (file: string): Promise<void> => {
    const stats = await lstat(file);
    if (stats.isSymbolicLink()) return;
    if (stats.mode & 0o077) found.push(path.relative(dir, file) || '.');
    if (stats.isDirectory()) for (const entry of await readdir(file)) await visit(path.join(file, entry));
  };
  await visit(dir);
  return found;
}

const admin = { username: 'template-admin', password: 'from-the-template-1' };
const start = (dataDir: string, env: Record<string, string> = { BOOTSTRAP_ADMIN_USERNAME: admin.username, BOOTSTRAP_ADMIN_PASSWORD: admin.password }) =>
  startNodeProcess({
    label: 'the built service',
    script: 'dist/main.js',
    env: { DATA_DIR: dataDir, HOST: '127.0.0.1', BCRYPT_COST: '4', ...env },
    readyPath: '/readyz',
    readyWithinMs: 60_000,
  });
const login = (baseUrl: string, credentials = admin) =>
  fetch(`${baseUrl}/api/auth/bearer/token`, { method: 'POST', body: new URLSearchParams(credentials) }).then((res) => res.status);

describeUnless(!BUILT && { what: 'the test of the embedded database template', why: 'dist/ is not built with it: run npm run build' })('the embedded database, unpacked from the build\'s template', () => {
  it('when the built service starts on a new data folder, then it unpacks the template, keeps the folder private, and opens it again on the next start', async () => {
    const dataDir = path.join(await mkdtemp(path.join(tmpdir(), 'template-')), 'data');
    try {
      const first = await start(dataDir);
      const firstLogin = await login(first.baseUrl);
      await first.stop();
      const second = await start(dataDir);
      const secondLogin = await login(second.baseUrl);
      await second.stop();

      expect([firstLogin, secondLogin]).toEqual([200, 200]);
      expect(first.output()).toContain("a new embedded database, unpacked from the build's template");
      // Made with every migration applied: the first start migrates nothing.
      expect(first.output()).not.toContain('migration applied');
      expect(second.output()).not.toContain('unpacked from');
      expect(await openToOthers(dataDir)).toEqual([]);
    } finally {
      await rm(path.dirname(dataDir), { recursive: true, force: true });
    }
  }, 120_000);

  it('when the built service starts on a new data folder with no admin configured, then the admin it makes (its password hashed while the database loads) can log in with the password in the file', async () => {
    const dataDir = path.join(await mkdtemp(path.join(tmpdir(), 'template-')), 'data');
    try {
      const first = await start(dataDir, {});
      const password = (await readFile(path.join(dataDir, 'first-admin-password'), 'utf8')).trim();
      const status = await login(first.baseUrl, { username: 'admin', password });
      await first.stop();

      expect(status).toBe(200);
      expect(first.output()).toContain('no users existed, so an admin was created');
    } finally {
      await rm(path.dirname(dataDir), { recursive: true, force: true });
    }
  }, 120_000);
});
