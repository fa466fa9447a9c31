import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import { Client } from 'pg';
import { startServerProcess, type ServerProcess } from './server-process';
import { onSharedServerOnly } from '../../helpers/database';

/** Contract, Hardening, "The first admin". */
describe('the first admin', () => {
  const started: ServerProcess[] = [];
  const start = async (...args: Parameters<typeof startServerProcess>) => {
    const server = await startServerProcess(...args);
    started.push(server);
    return server;
  };
  // Joined instances first: the one that created a database drops it.
  afterEach(async () => {
    for (const server of started.reverse()) await server.cleanup();
    started.length = 0;
  });

  const login = (server: ServerProcess, username: string, password: string) =>
    fetch(`${server.baseUrl}/api/auth/bearer/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username, password }).toString(),
    });

  it.each([
    ['a short password', { BOOTSTRAP_ADMIN_USERNAME: 'root', BOOTSTRAP_ADMIN_PASSWORD: 'password' }, /BOOTSTRAP_ADMIN_PASSWORD: must be at least 12 characters/],
    ['a breached password', { BOOTSTRAP_ADMIN_USERNAME: 'root', BOOTSTRAP_ADMIN_PASSWORD: 'Password1234' }, /BOOTSTRAP_ADMIN_PASSWORD: is too common/],
    ['a username outside the rule', { BOOTSTRAP_ADMIN_USERNAME: 'root admin', BOOTSTRAP_ADMIN_PASSWORD: 'a-fine-long-password' }, /BOOTSTRAP_ADMIN_USERNAME: /],
  ])('when the bootstrap admin has %s, then the start fails with a non-zero status and a message naming the variable', async (_label, env, message) => {
    const failure = startServerProcess(env);

    await expect(failure).rejects.toThrow(/exited during start \(code [1-9]/);
    await expect(failure).rejects.toThrow(message);
  }, 60_000);

  onSharedServerOnly()('with a database the test can reach', () => {
    it('when the bootstrap admin was deleted while another admin exists, then the next start does not bring it back', async () => {
      const env = { BOOTSTRAP_ADMIN_USERNAME: 'boot-admin', BOOTSTRAP_ADMIN_PASSWORD: 'boot-admin-password' };
      const first = await start(env);
      expect((await login(first, 'boot-admin', 'boot-admin-password')).status).toBe(200);
      const db = new Client({ connectionString: first.database.DATABASE_URL });
      await db.connect();
      try {
        await db.query("INSERT INTO users (username, password_hash, role) VALUES ('other-admin', $1, 'admin')", [await bcrypt.hash('other-admin-password', 4)]);
        await db.query("DELETE FROM users WHERE username = 'boot-admin'");

        const second = await start(env, { joinDatabaseOf: first });
        const { rows } = await db.query("SELECT username FROM users WHERE role = 'admin' ORDER BY username");

        expect(rows).toEqual([{ username: 'other-admin' }]);
        expect((await login(second, 'boot-admin', 'boot-admin-password')).status).toBe(401);
      } finally {
        await db.end();
      }
    }, 60_000);
  });

  it('when no user exists and no bootstrap admin is set, then the generated password goes to a 0600 file in DATA_DIR that the log names, never to the output, and the admin changes it while the service runs', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'first-admin-'));
    try {
      const server = await start({ DATA_DIR: dataDir });
      const file = path.join(dataDir, 'first-admin-password');
      const password = (await readFile(file, 'utf8')).trim();
      const mode = (await stat(file)).mode & 0o777;

      expect(mode).toBe(0o600);
      expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(server.output()).toContain(file);
      expect(server.output()).not.toContain(password);
      // Where to change it while the service runs: the console, not the command line (which cannot open the embedded database beside it).
      expect(server.output()).toContain('/console/, change it there with \\"Change password\\"');
      expect(server.output()).not.toContain('users set-password');
      const signedIn = await login(server, 'admin', password);
      expect(signedIn.status).toBe(200);

      const changed = await fetch(`${server.baseUrl}/api/v1/me/password`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${((await signedIn.json()) as { access_token: string }).access_token}` },
        body: JSON.stringify({ current_password: password, new_password: 'the-admins-own-password' }),
      });
      expect(changed.status).toBe(204);
      expect((await login(server, 'admin', 'the-admins-own-password')).status).toBe(200);
      expect((await login(server, 'admin', password)).status).toBe(401);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
