import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface ServerHandle {
  label: string;
  pid: number;
  baseUrl: string;
  stop: () => Promise<void>;
}

const children = new Set<ChildProcess>();

/** Kills every server this driver started (on exit or interrupt). Only our own children, by pid. */
export function killChildren(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitHealthy(baseUrl: string, child: ChildProcess, output: () => string, label: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${label} exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(`${baseUrl}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${label} did not become healthy within 30 s:\n${output()}`);
}

/** Starts `node <script>` with env, waits for GET /healthz. */
export async function startNode(
  label: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ServerHandle> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitHealthy(baseUrl, child, () => output, label);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    label,
    pid: child.pid!,
    baseUrl,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      children.delete(child);
    },
  };
}

/** Resident set size of a process in bytes (VmRSS), or 0 once it is gone. */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** User + system CPU time of a process in seconds (from /proc/<pid>/stat, clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS while a measurement runs; returns the peak. */
export function sampleRss(pid: number, everyMs = 50): { stop: () => number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssBytes(pid));
    },
  };
}

/**
 * Waits until a server has finished the work a stopped load left behind (queued bcrypt hashes,
 * in-flight queries): its CPU use stays under 10 % for 200 ms, or at most `capMs`.
 */
export async function settle(pid: number, capMs = 15_000): Promise<void> {
  const deadline = Date.now() + capMs;
  while (Date.now() < deadline) {
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 200));
    if (cpuSeconds(pid) - before < 0.02) return;
  }
}
