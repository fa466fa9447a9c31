import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from './server-process';

/** The TCP ports process `pid` listens on, from its open sockets and the kernel's socket tables. */
async function listeningTcpPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).trim().split('\n').slice(1);
    for (const line of lines) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      // 0A is TCP_LISTEN.
      if (state === '0A' && inode && inodes.has(inode)) ports.push(parseInt(local!.split(':')[1]!, 16));
    }
  }
  return ports.sort((a, b) => a - b);
}

/** Every file and folder under `dir` (itself included) whose mode gives group or others any permission. */
async function openToOthers(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (file: string): Promise<void> => {
    const stats = await lstat(file);
    if (stats.isSymbolicLink()) return;
    if (stats.mode & 0o077) found.push(`${path.relative(dir, file) || '.'} ${(stats.mode & 0o777).toString(8)}`);
    if (stats.isDirectory()) for (const entry of await readdir(file)) await visit(path.join(file, entry));
  };
  await visit(dir);
  return found;
}

const admin = { username: 'first-admin', password: 'embedded-private-pw-1' };
const env = { BOOTSTRAP_ADMIN_USERNAME: admin.username, BOOTSTRAP_ADMIN_PASSWORD: admin.password };

async function logsIn(server: ServerProcess): Promise<number> {
  const res = await fetch(`${server.baseUrl}/api/auth/bearer/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(admin),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('the embedded database (no DATABASE_URL) is reachable by this process alone', () => {
  let root: string;
  const running: ServerProcess[] = [];
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'apikeys-private-'));
  });
  afterAll(async () => {
    await Promise.all(running.map((s) => s.cleanup()));
    await rm(root, { recursive: true, force: true });
  });

  it('when the service starts on a new data folder, then it listens on no TCP port but its own, and the folder and every file in it are the owner\'s alone', async () => {
    const dataDir = path.join(root, 'new');
    const server = await startServerProcess(env, { embeddedDataDir: dataDir, readyWithinMs: 60_000 });
    running.push(server);

    expect(await logsIn(server)).toBe(200);
    expect(await listeningTcpPorts(server.pid)).toEqual([server.port]);
    expect(((await stat(dataDir)).mode & 0o777).toString(8)).toBe('700');
    expect(await openToOthers(dataDir)).toEqual([]);
    // The database is served on a Unix socket inside the folder, for the owner only.
    const socket = await stat(path.join(dataDir, '.s.PGSQL.5432'));
    expect(socket.isSocket()).toBe(true);
    expect((socket.mode & 0o777).toString(8)).toBe('600');

    expect((await server.stop()).code).toBe(0);
    expect(await openToOthers(dataDir)).toEqual([]);
    expect((await readdir(dataDir)).sort()).toEqual(['master.key', 'pgdata']);
  }, 180_000);

  it('when DATA_DIR is too long a path for the Unix socket, then the start fails naming DATA_DIR', async () => {
    const dataDir = path.join(root, 'x'.repeat(120));

    const error = await startServerProcess(env, { embeddedDataDir: dataDir }).then(
      () => new Error('the service started'),
      (err: Error) => err,
    );

    expect(error.message).toMatch(/exited during start \(code 1/);
    expect(error.message).toMatch(/Failed to start: DATA_DIR: .* is too long a path for the embedded database's Unix socket/);
  }, 60_000);

  it('when an existing data folder is open to others (0777, world-writable files), then the start makes it private again', async () => {
    const dataDir = path.join(root, 'existing');
    const first = await startServerProcess(env, { embeddedDataDir: dataDir, readyWithinMs: 60_000 });
    running.push(first);
    expect((await first.stop()).code).toBe(0);
    // As an older version, a copy or a careless chmod -R would have left it.
    const opened: string[] = [];
    const open = async (file: string): Promise<void> => {
      const stats = await lstat(file);
      await chmod(file, stats.isDirectory() ? 0o777 : 0o666);
      opened.push(file);
      if (stats.isDirectory()) for (const entry of await readdir(file)) await open(path.join(file, entry));
    };
    await open(dataDir);
    await mkdir(path.join(dataDir, 'notes'), { mode: 0o777 });
    await writeFile(path.join(dataDir, 'notes', 'readme.txt'), 'left here by hand', { mode: 0o666 });
    await chmod(path.join(dataDir, 'notes', 'readme.txt'), 0o666);
    expect((await openToOthers(dataDir)).length).toBeGreaterThan(10);

    const second = await startServerProcess(env, { embeddedDataDir: dataDir, readyWithinMs: 60_000 });
    running.push(second);

    expect(await logsIn(second)).toBe(200);
    expect(((await stat(dataDir)).mode & 0o777).toString(8)).toBe('700');
    expect(await openToOthers(dataDir)).toEqual([]);
    expect(await listeningTcpPorts(second.pid)).toEqual([second.port]);
    expect((await second.stop()).code).toBe(0);
  }, 180_000);
});
