/** Turns the recorded run into a result object, a text report and a Markdown table. */
import os from 'node:os';
import { KINDS, percentile, type MemorySample, type Recorder } from './stats';
import { overdueRows, type LatencyDrift, type OverdueAfter, type TableSample } from './tables';

/**
 * Samples (one a second) in each of the two windows compared: a third of the measured ones, at least 5.
 * Under load V8's heap rises and falls by a fifth or more, in cycles of up to a minute and a half on a
 * slow machine, and both how high it climbs and how far it falls back depend on when V8 chooses to
 * collect. So each window is averaged: over a whole cycle the mean takes in the highs and the lows,
 * where one window's highest or lowest sample is a single moment of the sawtooth. A leak, memory no
 * collection frees, raises the mean. Figures in docs/performance.md, "The soak test".
 */
const memoryWindow = (measured: number) => Math.max(5, Math.floor(measured / 3));

/** Shorter windows may not hold a whole cycle, so their growth is only indicative. */
const FULL_CYCLE_WINDOW_S = 60;

const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;

export interface RunFacts {
  durationS: number;
  warmupS: number;
  concurrency: number;
  keys: number;
  maxGrowthPct: number;
  target: string;
  postgres: string | undefined;
  /** Seconds the load really ran (shorter when interrupted). */
  elapsedS: number;
  interrupted: boolean;
  measuredRequests: number;
  /** CPU the load generator itself used, in cores. */
  clientCores: number;
  /** The machine's 1-minute load average when the load started and ended. */
  loadavg: number[];
  idle: MemorySample | undefined;
  samples: MemorySample[] | undefined;
  shutdown: { code: number | null; signal: string | null; ms: number } | undefined;
  serverLog: string[];
  /** Table rows and latency over time (only for an instance the script started). */
  tables: TableSample[] | undefined;
  latencyDrift: LatencyDrift | undefined;
  /** Seconds after which the sessions and replay records can have reached their steady state. */
  steadyFromS: number;
  overdue: OverdueAfter;
}

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;
const round = (n: number, digits = 1) => (Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : null);

export function buildResult(rec: Recorder, f: RunFacts) {
  const all = KINDS.flatMap((k) => rec.byKind.get(k)?.latencies ?? []).sort((a, b) => a - b);
  const byKind = Object.fromEntries(
    KINDS.map((k) => {
      const s = rec.byKind.get(k);
      const lat = [...(s?.latencies ?? [])].sort((a, b) => a - b);
      return [
        k,
        {
          requests: s?.requests ?? 0,
          sharePct: round(((s?.requests ?? 0) / Math.max(1, rec.requests)) * 100),
          unexpected: s?.unexpected ?? 0,
          p50Ms: round(percentile(lat, 50), 2),
          p99Ms: round(percentile(lat, 99), 2),
        },
      ];
    }),
  );
  const fiveXX = rec.count((k) => /^5\d\d$/.test(k));
  const connectionErrors = rec.count((k) => k.startsWith('conn:'));
  const unexpected = KINDS.reduce((n, k) => n + (rec.byKind.get(k)?.unexpected ?? 0), 0) - fiveXX - connectionErrors;

  // Memory: the mean of the first window after the warm-up is the baseline, the mean of the last
  // window of the load is the end; growth is end over baseline.
  let memory: Record<string, unknown> = { available: false };
  let growthPct: number | undefined;
  const samples = f.samples ?? [];
  const measured = samples.filter((s) => s.t >= f.warmupS && s.t <= f.elapsedS + 0.5);
  const windowLength = memoryWindow(measured.length);
  if (measured.length >= 2) {
    const baseline = mean(measured.slice(0, windowLength).map((s) => s.rssKiB));
    const end = mean(measured.slice(-windowLength).map((s) => s.rssKiB));
    const during = samples.filter((s) => s.t >= 0);
    const peak = Math.max(...during.map((s) => s.rssKiB));
    growthPct = ((end - baseline) / baseline) * 100;
    const first = during[0];
    const last = during[during.length - 1];
    const cpuCores = first && last && last.t > first.t ? (last.cpuS - first.cpuS) / (last.t - first.t) : NaN;
    memory = {
      available: true,
      idleMiB: f.idle ? mib(f.idle.rssKiB) : null,
      baselineMiB: mib(baseline),
      endMiB: mib(end),
      peakMiB: mib(peak),
      growthPct: round(growthPct),
      windowSamples: windowLength,
      serverCpuCores: round(cpuCores, 2),
      clientCpuCores: round(f.clientCores, 2),
      samples: samples.map((s) => ({ t: round(s.t), rssMiB: mib(s.rssKiB) })),
    };
  }

  const failures: string[] = [];
  if (f.interrupted) failures.push('interrupted before the deadline');
  if (fiveXX) failures.push(`${fiveXX} responses with status 5xx`);
  if (connectionErrors) failures.push(`${connectionErrors} connection errors`);
  if (unexpected) failures.push(`${unexpected} unexpected non-5xx statuses (the workload expects only successes)`);
  if (growthPct !== undefined && growthPct > f.maxGrowthPct) {
    failures.push(`resident memory grew ${growthPct.toFixed(1)} % after warm-up (limit ${f.maxGrowthPct} %)`);
  }
  if (f.shutdown && (f.shutdown.code !== 0 || f.shutdown.signal)) {
    failures.push(`the service did not exit 0 on SIGTERM (code ${f.shutdown.code}, signal ${f.shutdown.signal})`);
  }
  const overdue = f.tables ? overdueRows(f.tables, f.overdue) : [];
  // Only the first few: a pruning that stopped would repeat the line at every sample.
  if (overdue.length) failures.push(`pruning fell behind: ${overdue.slice(0, 3).join('; ')}${overdue.length > 3 ? ` (and ${overdue.length - 3} more samples)` : ''}`);
  const warnings: string[] = [];
  if (f.tables && f.elapsedS < f.steadyFromS) {
    warnings.push(`shorter than ${f.steadyFromS} s: not every session and replay record had time to end and be pruned, so their bound is not shown`);
  }
  if (growthPct !== undefined && windowLength < FULL_CYCLE_WINDOW_S) {
    warnings.push(
      `memory compared over ${windowLength}-sample windows, which may not hold a whole cycle of V8's heap: judge with at least ${3 * FULL_CYCLE_WINDOW_S} s after the warm-up`,
    );
  }
  if (growthPct === undefined) warnings.push('server memory not available (pass --pid with --url, Linux only): growth not judged');
  if (f.serverLog.length) warnings.push(`the service logged ${f.serverLog.length} lines at warn or above`);

  const cpus = os.cpus();
  return {
    pass: failures.length === 0,
    failures,
    warnings,
    config: {
      durationS: f.durationS,
      warmupS: f.warmupS,
      concurrency: f.concurrency,
      keys: f.keys,
      maxGrowthPct: f.maxGrowthPct,
      target: f.target,
    },
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model.trim() ?? 'unknown',
      memoryGiB: round(os.totalmem() / 2 ** 30),
      os: `${os.type()} ${os.release()}`,
      node: process.version,
      loadavg1m: f.loadavg.map((l) => round(l)),
      postgres: f.postgres ?? null,
    },
    requests: {
      total: rec.requests,
      measured: f.measuredRequests,
      perSecond: round(f.measuredRequests / Math.max(0.001, f.elapsedS - f.warmupS)),
      statuses: Object.fromEntries([...rec.statuses].sort(([a], [b]) => (a < b ? -1 : 1))),
      fiveXX,
      connectionErrors,
      unexpected,
      unexpectedExamples: rec.samples,
    },
    latency: { count: all.length, p50Ms: round(percentile(all, 50), 2), p99Ms: round(percentile(all, 99), 2), maxMs: round(all[all.length - 1] ?? NaN, 1), byKind },
    memory,
    shutdown: f.shutdown ?? null,
    serverLog: f.serverLog.slice(0, 20),
    tables: f.tables ? { steadyFromS: f.steadyFromS, overdueAfterS: f.overdue.afterS, samples: f.tables, latencyDrift: f.latencyDrift ?? null } : null,
  };
}

export type SoakResult = ReturnType<typeof buildResult>;

const num = (n: number) => n.toLocaleString('en-US');
const ms = (n: number | null) => (n === null ? '–' : `${n} ms`);

export function markdown(r: SoakResult): string {
  const m = r.memory as {
    available: boolean;
    idleMiB?: number | null;
    baselineMiB?: number;
    endMiB?: number;
    peakMiB?: number;
    growthPct?: number;
    serverCpuCores?: number | null;
    clientCpuCores?: number | null;
  };
  const statuses = Object.entries(r.requests.statuses)
    .map(([s, n]) => `${s}: ${num(n)}`)
    .join(', ');
  const lines = [
    '| Soak run | |',
    '|---|---|',
    `| Load | ${r.config.durationS} s (first ${r.config.warmupS} s warm-up), ${r.config.concurrency} workers, ${r.config.keys} keys |`,
    `| Machine | ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}${r.machine.postgres ? `, PostgreSQL ${r.machine.postgres}` : ''} (load generator on the same machine; 1-min load average ${r.machine.loadavg1m.join(' → ')}) |`,
    `| Requests | ${num(r.requests.total)} (${num(r.requests.perSecond ?? 0)}/s after warm-up) |`,
    `| Statuses | ${statuses} |`,
    `| 5xx / connection errors / other unexpected | ${r.requests.fiveXX} / ${r.requests.connectionErrors} / ${r.requests.unexpected} |`,
    `| Latency after warm-up, p50 / p99 | ${ms(r.latency.p50Ms)} / ${ms(r.latency.p99Ms)} |`,
    m.available
      ? `| Server RSS | ${m.idleMiB ?? '–'} MiB idle; mean ${m.baselineMiB} MiB after warm-up and ${m.endMiB} MiB at the end (peak ${m.peakMiB} MiB): ${(m.growthPct ?? 0) >= 0 ? '+' : ''}${m.growthPct} % |`
      : '| Server RSS | not measured |',
    ...(m.available && m.serverCpuCores !== null
      ? [`| CPU, average | service ${m.serverCpuCores} cores, load generator ${m.clientCpuCores ?? '–'} cores |`]
      : []),
    `| Result | ${r.pass ? '**pass**' : `**fail**: ${r.failures.join('; ')}`} |`,
    '',
    '| Request | Share | Count | p50 | p99 |',
    '|---|---:|---:|---:|---:|',
    ...KINDS.map((k) => {
      const s = r.latency.byKind[k] as { requests: number; sharePct: number | null; p50Ms: number | null; p99Ms: number | null };
      return `| ${LABELS[k]} | ${s.sharePct} % | ${num(s.requests)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} |`;
    }),
  ];
  return lines.join('\n');
}

const LABELS: Record<(typeof KINDS)[number], string> = {
  get: 'Get key `GET /api/v1/api-keys/{appname}`',
  list: 'List keys `GET /api/v1/api-keys?limit=20`',
  exchange: 'API-key token `POST /api/v1/auth/token`',
  refresh: 'Refresh `POST /api/auth/bearer/refresh`',
  login: 'Password token `POST /api/auth/bearer/token`',
  update: 'Update key `PUT /api/v1/api-keys/{appname}`',
  create: 'Create key `POST /api/v1/api-keys`',
  regen: 'Regenerate key `PUT …/{appname}/regen`',
  delete: 'Delete key `DELETE /api/v1/api-keys/{appname}`',
};

export function text(r: SoakResult): string {
  const out = [
    `soak: ${r.pass ? 'PASS' : 'FAIL'}`,
    ...r.failures.map((f) => `  failed: ${f}`),
    ...r.warnings.map((w) => `  warning: ${w}`),
    ...r.requests.unexpectedExamples.map((e) => `  unexpected: ${e}`),
    ...r.serverLog.slice(0, 5).map((l) => `  server log: ${l.slice(0, 300)}`),
    '',
    'Memory: RSS (VmRSS from /proc/<pid>/status) sampled every second; baseline = mean of the first third',
    '(at least 5 samples) after warm-up, end = mean of the last third of the load (as many), growth = (end - baseline) / baseline.',
    'Latency: from sending the request to the last byte of the response, requests started after warm-up.',
    '',
    markdown(r),
    ...(r.tables ? ['', tablesMarkdown(r.tables.samples, r.tables.steadyFromS, r.tables.overdueAfterS, r.tables.latencyDrift)] : []),
  ];
  return out.join('\n');
}

/** Rows of the bounded tables and of the audit trail over time, with the latency of each interval. */
export function tablesMarkdown(samples: TableSample[], steadyFromS: number, overdueAfterS: number, drift: LatencyDrift | null): string {
  return [
    ...(drift
      ? [
          `Latency, first minute → last minute: p50 ${ms(drift.firstMinute.p50Ms)} → ${ms(drift.lastMinute.p50Ms)}, ` +
            `p99 ${ms(drift.firstMinute.p99Ms)} → ${ms(drift.lastMinute.p99Ms)} (${num(drift.firstMinute.requests)} and ${num(drift.lastMinute.requests)} requests)`,
          '',
        ]
      : []),
    `Table rows over time. Steady state from ${steadyFromS} s (the session lifetime, or the 90 s a replay record is kept, plus two ` +
      `maintenance intervals); "overdue": rows still stored more than ${overdueAfterS} s after pruning could delete them (must be 0).`,
    '',
    '| t | sessions | request_token_jtis | audit_events | overdue sessions / replay records | requests in interval | p50 | p99 |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...samples.map(
      (s) =>
        `| ${s.t} s | ${num(s.sessions)} | ${num(s.requestTokenJtis)} | ${num(s.auditEvents)} | ${s.overdueSessions} / ${s.overdueReplayRecords} | ` +
        `${num(s.requests)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} |`,
    ),
  ].join('\n');
}
