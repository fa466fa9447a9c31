/** Command-line flags and SOAK_* environment variables of the soak test. Flags win over the environment. */

export interface SoakOptions {
  /** Seconds of load, warm-up included. */
  durationS: number;
  /** Seconds at the start of the load whose latencies and memory are not judged. */
  warmupS: number;
  concurrency: number;
  /** An already running instance; undefined means: start one. */
  url: string | undefined;
  /** With --url: the instance's process id, for its memory. */
  pid: number | undefined;
  /** Database for the instance the script starts (a fresh schema in it per run). */
  databaseUrl: string;
  adminUsername: string;
  /** Only with --url; a started instance gets a random bootstrap password. */
  adminPassword: string | undefined;
  /** Keys created for the run and shared by all workers. */
  keys: number;
  /** Allowed RSS growth, percent, from the start of the measured window to its end. */
  maxGrowthPct: number;
  /** For an instance the script starts: SESSION_MAX_TTL and REFRESH_TOKEN_TTL (ACCESS_TOKEN_TTL half of it), so sessions end during the run. */
  sessionTtlS: number;
  /** For an instance the script starts: MAINTENANCE_INTERVAL_SECONDS. */
  maintenanceIntervalS: number;
  /** Seconds between two samples of the table sizes and of the latency. */
  sampleEveryS: number;
  json: boolean;
}

export const USAGE = `Usage: tsx scripts/soak.ts [options]

Drives a mixed workload (key reads, token exchanges, refreshes, key writes, password logins) at a fixed
concurrency and reports requests, statuses, p50/p99 latency and the server's resident memory.
Exit code 0 when it passes: no 5xx, no connection errors, no unexpected 4xx, RSS growth within the limit
(and, for an instance it started, a clean exit on SIGTERM).

  --duration S      seconds of load, warm-up included (SOAK_DURATION, default 60)
  --warmup S        seconds not judged at the start (SOAK_WARMUP, default 25% of duration, 5..30)
  --concurrency N   parallel workers, one request in flight each (SOAK_CONCURRENCY, default 16)
  --keys N          API keys created for the run (SOAK_KEYS, default 50)
  --max-growth P    allowed RSS growth in percent (SOAK_MAX_GROWTH, default 20)
  --session-ttl S   a started instance's SESSION_MAX_TTL and REFRESH_TOKEN_TTL, ACCESS_TOKEN_TTL half of it
                    (SOAK_SESSION_TTL, default 60): sessions end, and are pruned, during the run
  --maintenance-interval S
                    a started instance's MAINTENANCE_INTERVAL_SECONDS (SOAK_MAINTENANCE_INTERVAL, default 10)
  --sample-every S  seconds between two samples of table rows and latency (SOAK_SAMPLE_EVERY, default 30)
  --url URL         use a running instance instead of starting one (SOAK_URL); needs
                    SOAK_ADMIN_PASSWORD (and SOAK_ADMIN_USERNAME, default admin) of an admin user
  --pid PID         with --url: its process id, to read its memory (SOAK_PID); else memory is not judged
  --json            print the result as JSON instead of the text report
  --help            this text

Without --url the script starts "node --import tsx src/main.ts" on a free 127.0.0.1 port, against
DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test, in a fresh schema
that it drops at the end, and samples the rows of sessions, request_token_jtis and audit_events there.
It also fails when pruning falls behind: a session or replay record still stored three maintenance
intervals (at least 15 s) after it could be pruned. With none such, every row left was made within
its lifetime, so the two tables stay bounded by the token rate times that lifetime.`;

export class UsageError extends Error {}

function positiveNumber(name: string, raw: string, { integer = false, min = 0 } = {}): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${name}: expected ${integer ? 'an integer' : 'a number'} >= ${min}, got "${raw}"`);
  }
  return n;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): SoakOptions | 'help' {
  const raw: Record<string, string | undefined> = {
    duration: env.SOAK_DURATION,
    warmup: env.SOAK_WARMUP,
    concurrency: env.SOAK_CONCURRENCY,
    keys: env.SOAK_KEYS,
    'max-growth': env.SOAK_MAX_GROWTH,
    url: env.SOAK_URL,
    pid: env.SOAK_PID,
    'session-ttl': env.SOAK_SESSION_TTL,
    'maintenance-interval': env.SOAK_MAINTENANCE_INTERVAL,
    'sample-every': env.SOAK_SAMPLE_EVERY,
  };
  let json = false;
  const valued = new Set(Object.keys(raw));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--json') {
      json = true;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    const name = m?.[1];
    if (!m || !name || !valued.has(name)) throw new UsageError(`unknown argument "${arg}" (see --help)`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    raw[name] = value;
  }

  const durationS = positiveNumber('--duration', raw.duration ?? '60', { min: 1 });
  const warmupS =
    raw.warmup !== undefined
      ? positiveNumber('--warmup', raw.warmup)
      : // V8 keeps growing its heap for the first 15-25 s at a few hundred requests a second; a
        // baseline taken earlier measures that, not a leak.
        Math.min(Math.max(5, Math.round(durationS * 0.25)), 30, durationS / 2);
  if (warmupS >= durationS) throw new UsageError('--warmup must be shorter than --duration');
  const concurrency = positiveNumber('--concurrency', raw.concurrency ?? '16', { integer: true, min: 1 });
  const keys = positiveNumber('--keys', raw.keys ?? '50', { integer: true, min: 1 });
  const maxGrowthPct = positiveNumber('--max-growth', raw['max-growth'] ?? '20');
  const sessionTtlS = positiveNumber('--session-ttl', raw['session-ttl'] ?? '60', { integer: true, min: 2 });
  const maintenanceIntervalS = positiveNumber('--maintenance-interval', raw['maintenance-interval'] ?? '10', { integer: true, min: 1 });
  const sampleEveryS = positiveNumber('--sample-every', raw['sample-every'] ?? '30', { min: 1 });
  const url = raw.url ? raw.url.replace(/\/+$/, '') : undefined;
  if (url) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:') throw new UsageError('--url: only http:// is supported');
  }
  const pid = raw.pid !== undefined ? positiveNumber('--pid', raw.pid, { integer: true, min: 1 }) : undefined;
  if (pid !== undefined && !url) throw new UsageError('--pid only goes with --url');
  const adminPassword = env.SOAK_ADMIN_PASSWORD || undefined;
  if (url && !adminPassword) throw new UsageError('--url needs SOAK_ADMIN_PASSWORD (an admin user of that instance)');

  return {
    durationS,
    warmupS,
    concurrency,
    url,
    pid,
    databaseUrl: env.DATABASE_URL || env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
    adminUsername: env.SOAK_ADMIN_USERNAME || 'admin',
    adminPassword,
    keys,
    maxGrowthPct,
    sessionTtlS,
    maintenanceIntervalS,
    sampleEveryS,
    json,
  };
}
