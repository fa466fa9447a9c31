import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { describeUnless } from './skips';

/** redis-server on the PATH (or where Debian puts it), if installed. */
export const REDIS_SERVER = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin']
  .map((dir) => join(dir, 'redis-server'))
  .find((path) => existsSync(path));
const INSTALL_HINT = 'redis-server is not installed: apt-get install redis-server (Debian/Ubuntu) or brew install redis (macOS) to run it';

/**
 * `describe` when a Redis of the test's own can be started, else `describe.skip`, the run's summary
 * saying why and what to install (test/helpers/skips.ts); under CI=true a missing redis-server fails instead (CI must prove these).
 */
export function describeWithRedisServer(what: string): jest.Describe {
  if (!REDIS_SERVER && process.env.CI === 'true') throw new Error(`${what}: ${INSTALL_HINT}; CI=true does not allow skipping it`);
  return describeUnless(!REDIS_SERVER && { what: `the ${what}`, why: INSTALL_HINT });
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether a Redis answers PING on this port. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Redis of the test's own, in memory only; resolves once it answers. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if (await answersPing(port)) return child;
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not start on port ${port}`);
}

/** Kills it (a stopped one too) and waits for it to be gone. */
export function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
