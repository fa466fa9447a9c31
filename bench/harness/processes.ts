import { readFileSync } from 'node:fs';
import { REPOSITORY_ROOT, startNodeProcess, type NodeProcess } from '../../scripts/harness/node-process';

export const ROOT = REPOSITORY_ROOT;

export type ServerHandle = NodeProcess;

/** Starts `node [nodeArgs] <script>` with exactly `env` (and PORT), and waits for GET /healthz, which the service and the floors both serve. */
export function startNode(label: string, script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerHandle> {
  return startNodeProcess({ label, script, nodeArgs, env, readyPath: '/healthz' });
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
