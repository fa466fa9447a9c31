/**
 * PgBouncer and nginx as child processes on free loopback ports, configured by the files in deploy/
 * (those of `docker compose --profile scale`) plus a main file of their own written
 * into a temporary folder of its own: what runs the service "at scale" in the load-balancer test.
 * Debian's packages (`apt-get install -y pgbouncer nginx`); their system services are never used.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path, { delimiter } from 'node:path';
import { freePort, REPOSITORY_ROOT } from './node-process';

export const PROXIES_INSTALL_HINT = 'pgbouncer and nginx are not installed: apt-get install -y pgbouncer nginx (Debian/Ubuntu)';

/** The executable on the PATH or where Debian puts daemons (/usr/sbin is not on every PATH), if any. */
export function findExecutable(name: string): string | undefined {
  return [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/usr/bin']
    .filter(Boolean)
    .map((dir) => path.join(dir, name))
    .find((file) => existsSync(file));
}

export interface Proxy {
  port: number;
  /** Everything it printed, and its log file. */
  output: () => string;
  /** SIGTERM (SIGKILL after 5 s), then the folder is removed. */
  stop: () => Promise<void>;
}

async function waitForPort(port: number, child: ChildProcess, label: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${label} exited during start:\n${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`${label} did not listen on 127.0.0.1:${port} within 10 s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function run(label: string, file: string, args: string[], dir: string, port: number, logFile?: string): Promise<Proxy> {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (printed += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (printed += text));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const output = () => {
    let log = '';
    try {
      log = logFile ? readFileSync(logFile, 'utf8') : '';
    } catch {
      // not written yet
    }
    return `${printed}${log}`;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, child, label, output);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, output, stop };
}

/** The deployment's configuration files, shared with `docker compose --profile scale` (docker-compose.yml). */
export const DEPLOY_DIR = path.join(REPOSITORY_ROOT, 'deploy');

/**
 * PgBouncer 1.18 in front of the PostgreSQL at `server` (any database name is passed through) with
 * the settings of deploy/pgbouncer/pooling.ini, the file the compose deployment includes too
 * (`pool_mode = transaction`, `ignore_startup_parameters = extra_float_digits`); this file adds only
 * what differs on loopback: the address, trust authentication (as the test server has), the log and
 * pid files, and `poolSize` server connections per database.
 */
export async function startPgBouncer(options: { pgbouncer: string; server: { host: string; port: number; user: string }; poolSize: number }): Promise<Proxy> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pgbouncer-'));
  const port = await freePort();
  const { host, port: serverPort, user } = options.server;
  const ini = `[databases]
* = host=${host} port=${serverPort}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/userlist.txt
; The test reads SHOW CONFIG on the admin console to check the settings deploy/ gives.
admin_users = ${user}
default_pool_size = ${options.poolSize}
logfile = ${dir}/pgbouncer.log
pidfile = ${dir}/pgbouncer.pid
%include ${dir}/pooling.ini
`;
  await writeFile(path.join(dir, 'pgbouncer.ini'), ini);
  // A copy, so that PgBouncer running as postgres (below) can read it wherever the checkout is.
  await copyFile(path.join(DEPLOY_DIR, 'pgbouncer', 'pooling.ini'), path.join(dir, 'pooling.ini'));
  await writeFile(path.join(dir, 'userlist.txt'), `"${user}" ""\n`);
  // PgBouncer refuses to run as root: as root, hand it the folder and let it switch to postgres.
  const args = [path.join(dir, 'pgbouncer.ini')];
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    await chmod(dir, 0o700);
    for (const name of ['', 'pgbouncer.ini', 'pooling.ini', 'userlist.txt']) await chown(path.join(dir, name), uid, gid);
    args.unshift('-u', 'postgres');
  }
  return run('pgbouncer', options.pgbouncer, args, dir, port, path.join(dir, 'pgbouncer.log'));
}

/**
 * deploy/nginx/load-balancer.conf.template with its `${NAME}` placeholders replaced, as the nginx
 * image's envsubst does in the compose deployment; a placeholder without a value is an error.
 */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for \${${name}} in the nginx template`);
    return value;
  });
}

/**
 * nginx round-robin over `upstreams` (loopback ports), configured by deploy/nginx/load-balancer.conf.template,
 * the file the compose deployment uses: the client's address in X-Forwarded-For (overwritten, so a
 * client cannot forge it), and a request whose upstream refuses the connection passed to the next.
 * The main file here holds only what a process of the test needs: no daemon, one process, its
 * own pid, log and temporary folders.
 */
export async function startNginx(options: { nginx: string; upstreams: number[] }): Promise<Proxy> {
  const dir = await mkdtemp(path.join(tmpdir(), 'nginx-'));
  const port = await freePort();
  const template = await readFile(path.join(DEPLOY_DIR, 'nginx', 'load-balancer.conf.template'), 'utf8');
  const balancer = fillTemplate(template, {
    NGINX_UPSTREAM_SERVERS: options.upstreams.map((p) => `server 127.0.0.1:${p};`).join('\n  '),
    NGINX_LISTEN: `127.0.0.1:${port}`,
  });
  await writeFile(path.join(dir, 'load-balancer.conf'), balancer);
  const conf = `daemon off;
# One process, as the user who runs the test: no worker switching to another user.
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/load-balancer.conf;
}
`;
  await writeFile(path.join(dir, 'nginx.conf'), conf);
  return run('nginx', options.nginx, ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', path.join(dir, 'nginx.conf')], dir, port, path.join(dir, 'error.log'));
}
