/**
 * The sizes of the tables that must stay bounded (sessions, request_token_jtis) and of the one that
 * grows by design (audit_events), sampled over the run with the latency of the same interval.
 */
import { Client } from 'pg';
import { percentile, type Recorder } from './stats';

export interface TableSample {
  /** Seconds since the load started. */
  t: number;
  sessions: number;
  requestTokenJtis: number;
  auditEvents: number;
  /** Requests, and their p50/p99 latency, since the previous sample (null: none). */
  requests: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

/** p50 and p99 of the latencies in the first and in the last minute of the load, from the sampled intervals. */
export interface LatencyDrift {
  firstMinute: { p50Ms: number | null; p99Ms: number | null; requests: number };
  lastMinute: { p50Ms: number | null; p99Ms: number | null; requests: number };
}

const rounded = (n: number) => (Number.isFinite(n) ? Math.round(n * 10) / 10 : null);

export class TableSampler {
  readonly samples: TableSample[] = [];
  /** The latencies of each sample's interval, sorted, by the sample's t. */
  private readonly windows: { t: number; latencies: number[] }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<void> = Promise.resolve();

  private constructor(
    private readonly client: Client,
    private readonly schema: string,
    private readonly recorder: Recorder,
    private readonly origin: () => number,
  ) {}

  static async connect(databaseUrl: string, schema: string, recorder: Recorder, origin: () => number): Promise<TableSampler> {
    const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
    await client.connect();
    return new TableSampler(client, schema, recorder, origin);
  }

  /** Takes a sample (the latency window closes now; the counts follow a moment later). */
  sample(): Promise<void> {
    const t = this.origin();
    const window = this.recorder.takeWindow();
    this.windows.push({ t, latencies: window });
    const s = (table: string) => `(SELECT count(*)::int FROM "${this.schema}".${table})`;
    this.pending = this.pending
      .then(() =>
        this.client.query<{ sessions: number; jtis: number; audit: number }>(
          `SELECT ${s('sessions')} AS sessions, ${s('request_token_jtis')} AS jtis, ${s('audit_events')} AS audit`,
        ),
      )
      .then(({ rows }) => {
        const r = rows[0]!;
        this.samples.push({
          t: Math.round(t),
          sessions: r.sessions,
          requestTokenJtis: r.jtis,
          auditEvents: r.audit,
          requests: window.length,
          p50Ms: rounded(percentile(window, 50)),
          p99Ms: rounded(percentile(window, 99)),
        });
      });
    return this.pending;
  }

  /** Latency in the first 60 s of the load against the last 60 s (whole intervals, so about a minute each). */
  drift(): LatencyDrift {
    const end = this.windows[this.windows.length - 1]?.t ?? 0;
    const of = (windows: { latencies: number[] }[]) => {
      const all = windows.flatMap((w) => w.latencies).sort((a, b) => a - b);
      return { p50Ms: rounded(percentile(all, 50)), p99Ms: rounded(percentile(all, 99)), requests: all.length };
    };
    return { firstMinute: of(this.windows.filter((w) => w.t <= 60)), lastMinute: of(this.windows.filter((w) => w.t > end - 60)) };
  }

  start(everyS: number, onSample: (s: TableSample) => void): void {
    this.timer = setInterval(() => {
      void this.sample().then(
        () => onSample(this.samples[this.samples.length - 1]!),
        () => undefined,
      );
    }, everyS * 1000);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sample().catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}

/**
 * Whether the sessions and replay records stayed bounded: once both can have reached their steady
 * state (`steadyFromS`), the largest count of the second half of the remaining samples exceeds the
 * largest of the first half by at most 25 %. Undefined when the run is too short to tell.
 */
export function boundedGrowth(samples: TableSample[], steadyFromS: number): { judged: boolean; grew: string[] } {
  const steady = samples.filter((s) => s.t >= steadyFromS);
  if (steady.length < 4) return { judged: false, grew: [] };
  const half = Math.floor(steady.length / 2);
  const grew: string[] = [];
  for (const table of ['sessions', 'requestTokenJtis'] as const) {
    const first = Math.max(...steady.slice(0, half).map((s) => s[table]));
    const second = Math.max(...steady.slice(half).map((s) => s[table]));
    if (second > first * 1.25) grew.push(`${table} grew from at most ${first} rows to ${second} after the steady state`);
  }
  return { judged: true, grew };
}
