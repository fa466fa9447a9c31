/** Request bookkeeping (statuses, latencies per kind) and the server's memory samples. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const KINDS = ['get', 'list', 'exchange', 'refresh', 'login', 'update', 'create', 'regen', 'delete'] as const;
export type Kind = (typeof KINDS)[number];

interface KindStats {
  requests: number;
  unexpected: number;
  /** Latencies (ms) of requests that started after the warm-up. */
  latencies: number[];
}

export class Recorder {
  readonly byKind = new Map<Kind, KindStats>(KINDS.map((k) => [k, { requests: 0, unexpected: 0, latencies: [] }]));
  /** HTTP status (or "conn:<code>" for a connection failure) -> count, every request of the load phase. */
  readonly statuses = new Map<string, number>();
  /** A few examples of unexpected answers, for the report. */
  readonly samples: string[] = [];
  requests = 0;
  /** Set when the warm-up ends; latencies before it are not kept. */
  measuring = false;
  /** Latencies of every request since the last takeWindow(), warm-up included (for latency over time). */
  private window: number[] = [];

  record(kind: Kind, expected: number, status: number, ms: number, body: string, error?: string): boolean {
    const s = this.byKind.get(kind) as KindStats;
    s.requests++;
    this.requests++;
    const key = error ? `conn:${error}` : String(status);
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    if (this.measuring) s.latencies.push(ms);
    this.window.push(ms);
    const ok = !error && status === expected;
    if (!ok) {
      s.unexpected++;
      if (this.samples.length < 10) this.samples.push(`${kind}: ${error ?? status} ${body.slice(0, 200)}`);
    }
    return ok;
  }

  /** The latencies recorded since the last call, sorted, and a fresh window. */
  takeWindow(): number[] {
    const taken = this.window.sort((a, b) => a - b);
    this.window = [];
    return taken;
  }

  count(predicate: (key: string) => boolean): number {
    let n = 0;
    for (const [k, v] of this.statuses) if (predicate(k)) n += v;
    return n;
  }
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export interface MemorySample {
  /** Seconds since the load started (negative before). */
  t: number;
  rssKiB: number;
  /** CPU seconds (user + system) the process has used so far. */
  cpuS: number;
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** VmRSS and CPU time of a Linux process from /proc; undefined when unreadable (gone, or not Linux). */
export function readProcess(pid: number): { rssKiB: number; cpuS: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (!rss?.[1]) return undefined;
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuTicks = Number(fields[11]) + Number(fields[12]);
    return { rssKiB: Number(rss[1]), cpuS: cpuTicks / ticksPerSecond() };
  } catch {
    return undefined;
  }
}

/** Samples a process every `intervalMs` into `samples`. */
export class MemorySampler {
  readonly samples: MemorySample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly origin: () => number,
  ) {}

  sample(): MemorySample | undefined {
    const p = readProcess(this.pid);
    if (!p) return undefined;
    const s = { t: this.origin(), ...p };
    this.samples.push(s);
    return s;
  }

  start(intervalMs = 1_000): void {
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
