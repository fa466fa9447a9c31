/**
 * The sizes of the tables that must stay bounded (sessions, request_token_jtis) and of the one that
 * grows by design (audit_events), sampled over the run with the latency of the same interval; and
 * the rows pruning should long have deleted ("overdue"), which must stay at zero whatever the load:
 * then every row left was created within the last lifetime, and the tables are bounded by the
 * token rate times that lifetime.
 */
import { Client } from 'pg';
import { percentile, type Recorder } from './stats';

export interface TableSample {
  /** Seconds since the load started. */
  t: number;
  sessions: number;
  requestTokenJtis: number;
  auditEvents: number;
  /** Sessions revoked, or past their end, more than `overdueAfterS` ago: pruning should have deleted them. */
  overdueSessions: number;
  /** Replay records past their token's exp plus CLOCK_TOLERANCE by more than `overdueAfterS`. */
  overdueReplayRecords: number;
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
    private readonly overdue: OverdueAfter,
  ) {}

  static async connect(databaseUrl: string, schema: string, recorder: Recorder, origin: () => number, overdue: OverdueAfter): Promise<TableSampler> {
    const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
    await client.connect();
    return new TableSampler(client, schema, recorder, origin, overdue);
  }

  /** Takes a sample (the latency window closes now; the counts follow a moment later). */
  sample(): Promise<void> {
    const t = this.origin();
    const window = this.recorder.takeWindow();
    this.windows.push({ t, latencies: window });
    const table = (name: string) => `"${this.schema}".${name}`;
    const ago = (parameter: string) => `now() - make_interval(secs => ${parameter})`;
    this.pending = this.pending
      .then(() =>
        this.client.query<{ sessions: number; jtis: number; audit: number; overdue_sessions: number; overdue_jtis: number }>(
          `SELECT s.n AS sessions, s.overdue AS overdue_sessions, j.n AS jtis, j.overdue AS overdue_jtis,
                  (SELECT count(*)::int FROM ${table('audit_events')}) AS audit
             FROM (SELECT count(*)::int AS n, count(*) FILTER (WHERE revoked_at < ${ago('$1')} OR expires_at < ${ago('$1')})::int AS overdue
                     FROM ${table('sessions')}) AS s,
                  (SELECT count(*)::int AS n, count(*) FILTER (WHERE expires_at < ${ago('$2')})::int AS overdue
                     FROM ${table('request_token_jtis')}) AS j`,
          [this.overdue.afterS, this.overdue.afterS + this.overdue.clockToleranceS],
        ),
      )
      .then(({ rows }) => {
        const r = rows[0]!;
        this.samples.push({
          t: Math.round(t),
          sessions: r.sessions,
          requestTokenJtis: r.jtis,
          auditEvents: r.audit,
          overdueSessions: r.overdue_sessions,
          overdueReplayRecords: r.overdue_jtis,
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
    await this.pending.catch(() => undefined);
    // The end of the load, unless the interval's own sample has just been taken.
    const last = this.samples[this.samples.length - 1];
    if (!last || this.origin() - last.t >= 1) await this.sample().catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}

/** When a row counts as overdue: this long after pruning could first delete it (a few maintenance intervals). */
export interface OverdueAfter {
  afterS: number;
  /** The instance's CLOCK_TOLERANCE: replay records are kept that long past their token's exp. */
  clockToleranceS: number;
}

/** One line per sample that found overdue rows: pruning did not keep up (or did not run). */
export function overdueRows(samples: TableSample[], overdue: OverdueAfter): string[] {
  return samples
    .filter((s) => s.overdueSessions > 0 || s.overdueReplayRecords > 0)
    .map(
      (s) =>
        `at ${s.t} s, ${s.overdueSessions} sessions and ${s.overdueReplayRecords} replay records were still stored ` +
        `more than ${overdue.afterS} s after they could be pruned`,
    );
}
