/**
 * Soak test: a mixed workload at a fixed concurrency against a running instance of the service
 * (started here unless --url is given), reporting requests, statuses, p50/p99 latency and the
 * server's resident memory. `tsx scripts/soak.ts --help` lists the options.
 *
 * Passes (exit 0) when there was no 5xx, no connection error, no other unexpected status, the
 * server's RSS grew at most --max-growth percent (20) from just after the warm-up to the end, and a
 * started instance exited 0 on SIGTERM. Anything else exits 1.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Client } from 'pg';
import { HttpClient } from './soak/http';
import { parseOptions, USAGE, UsageError, type SoakOptions } from './soak/options';
import { buildResult, text } from './soak/report';
import { startService, type StartedService } from './soak/service';
import { MemorySampler, Recorder, readProcess } from './soak/stats';
import { SetupError, Workload } from './soak/workload';
import { TableSampler } from './soak/tables';

/** The started instance's CLOCK_TOLERANCE (its default). */
const CLOCK_TOLERANCE_S = 30;
/** How long a replay record is kept: the soak's request tokens live 60 s, plus CLOCK_TOLERANCE. */
const REPLAY_RECORD_S = 60 + CLOCK_TOLERANCE_S;

const log = (msg: string) => process.stderr.write(`[soak] ${msg}\n`);

async function postgresVersion(databaseUrl: string): Promise<string | undefined> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const r = await client.query<{ server_version: string }>('SHOW server_version');
    return r.rows[0]?.server_version.split(' ')[0];
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function run(opts: SoakOptions): Promise<number> {
  let service: StartedService | undefined;
  let url: string;
  let pid: number | undefined;
  let credentials: { username: string; password: string };
  let postgres: string | undefined;

  // Ctrl-C stops the load early; the service is still stopped and the schema dropped.
  let interrupted = false;
  const onSignal = () => {
    if (!interrupted) log('interrupted: stopping the load');
    interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  if (opts.url) {
    url = opts.url;
    pid = opts.pid;
    credentials = { username: opts.adminUsername, password: opts.adminPassword as string };
    log(`target ${url}${pid ? ` (pid ${pid})` : ' (no --pid: memory not measured)'}`);
  } else {
    postgres = await postgresVersion(opts.databaseUrl);
    log(`starting the service on ${new URL(opts.databaseUrl).host} (PostgreSQL ${postgres ?? '?'}) in a fresh schema`);
    service = await startService(opts.databaseUrl, { sessionTtlS: opts.sessionTtlS, maintenanceIntervalS: opts.maintenanceIntervalS });
    url = service.url;
    pid = service.pid;
    credentials = { username: service.adminUsername, password: service.adminPassword };
    log(`service pid ${pid} listening on ${url}`);
  }

  // Whatever happens below, never outlive the planned run by much.
  const watchdog = setTimeout(() => {
    log('watchdog: the run overran its duration by 120 s; giving up');
    if (service) void service.stop().finally(() => process.exit(1));
    else process.exit(1);
  }, (opts.durationS + 120) * 1000);
  watchdog.unref();

  const http = new HttpClient(url, opts.concurrency + 2);
  const recorder = new Recorder();
  const runId = randomBytes(3).toString('hex');
  const workload = new Workload(http, recorder, runId, credentials);
  let loadStart = 0;
  const sampler = pid ? new MemorySampler(pid, () => (Date.now() - loadStart) / 1000) : undefined;
  const idle = pid ? readProcess(pid) : undefined;
  let measuredFrom = 0;
  let elapsedS = 0;
  let clientCpu: NodeJS.CpuUsage | undefined;
  let clientCores = NaN;
  const loadavg: number[] = [];
  let shutdown: Awaited<ReturnType<StartedService['stop']>> | undefined;
  let tables: TableSampler | undefined;
  // A row is overdue once three maintenance rounds (at least 15 s) could have deleted it.
  const overdue = { afterS: Math.max(15, 3 * opts.maintenanceIntervalS), clockToleranceS: CLOCK_TOLERANCE_S };
  try {
    log(`setup: admin login, ${opts.keys} keys, ${opts.concurrency} workers`);
    await workload.setup(opts.keys);

    if (service) {
      tables = await TableSampler.connect(opts.databaseUrl, service.schema, recorder, () => (Date.now() - loadStart) / 1000, overdue);
    }
    loadStart = Date.now();
    loadavg.push(os.loadavg()[0] ?? NaN);
    await tables?.sample();
    tables?.start(opts.sampleEveryS, (s) =>
      log(
        `${s.t} s: rows sessions ${s.sessions}, request_token_jtis ${s.requestTokenJtis}, audit_events ${s.auditEvents}; ` +
          `overdue ${s.overdueSessions} / ${s.overdueReplayRecords}; p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms`,
      ),
    );
    clientCpu = process.cpuUsage();
    const deadline = loadStart + opts.durationS * 1000;
    const running = () => !interrupted && Date.now() < deadline;
    sampler?.sample();
    sampler?.start();
    const warmup = setTimeout(() => {
      recorder.measuring = true;
      measuredFrom = recorder.requests;
    }, opts.warmupS * 1000);
    let last = { t: 0, n: 0 };
    const progress = setInterval(() => {
      const t = (Date.now() - loadStart) / 1000;
      const rss = sampler?.samples[sampler.samples.length - 1];
      const rate = Math.round((recorder.requests - last.n) / (t - last.t));
      const bad = recorder.count((k) => !/^2\d\d$/.test(k));
      log(`${t.toFixed(0)} s: ${recorder.requests} requests, ${rate}/s, ${bad} not 2xx${rss ? `, server RSS ${(rss.rssKiB / 1024).toFixed(1)} MiB` : ''}`);
      last = { t, n: recorder.requests };
    }, 5_000);
    log(`load: ${opts.durationS} s (first ${opts.warmupS} s warm-up) at concurrency ${opts.concurrency}`);
    try {
      await Promise.all(Array.from({ length: opts.concurrency }, (_, i) => workload.worker(i, running)));
    } finally {
      clearTimeout(warmup);
      clearInterval(progress);
      sampler?.sample();
      sampler?.stop();
      await tables?.stop();
    }
    elapsedS = (Date.now() - loadStart) / 1000;
    loadavg.push(os.loadavg()[0] ?? NaN);
    const used = process.cpuUsage(clientCpu);
    clientCores = (used.user + used.system) / 1e6 / elapsedS;
  } finally {
    // On an instance we did not start, delete the pool keys again (also after a failed setup).
    if (!service && workload.keys.length) {
      const failed = await workload.cleanup().catch(() => workload.keys.length);
      if (failed) log(`cleanup: ${failed} pool keys could not be deleted`);
    }
    http.close();
    if (service) {
      shutdown = await service.stop();
      log(`service stopped with SIGTERM in ${shutdown.ms} ms: code ${shutdown.code}, signal ${shutdown.signal}`);
      await service.dropSchema().catch((err: Error) => log(`dropping the schema failed: ${err.message}`));
    }
    clearTimeout(watchdog);
  }

  const result = buildResult(recorder, {
    durationS: opts.durationS,
    warmupS: opts.warmupS,
    concurrency: opts.concurrency,
    keys: opts.keys,
    maxGrowthPct: opts.maxGrowthPct,
    target: opts.url ?? 'started by the script',
    postgres,
    elapsedS,
    interrupted,
    measuredRequests: recorder.requests - measuredFrom,
    clientCores,
    loadavg,
    idle: idle ? { t: -1, ...idle } : undefined,
    samples: sampler?.samples,
    shutdown,
    serverLog: service?.logLines ?? [],
    tables: tables?.samples,
    latencyDrift: tables?.drift(),
    steadyFromS: Math.max(opts.sessionTtlS, REPLAY_RECORD_S) + 2 * opts.maintenanceIntervalS,
    overdue,
  });
  process.stdout.write(`${opts.json ? JSON.stringify(result, null, 2) : text(result)}\n`);
  return result.pass ? 0 : 1;
}

async function main(): Promise<void> {
  let opts: SoakOptions | 'help';
  try {
    opts = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  try {
    process.exitCode = await run(opts);
  } catch (err) {
    log(err instanceof SetupError ? `setup failed: ${err.message}` : `failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exitCode = 1;
  }
}

void main().then(() => process.exit(process.exitCode ?? 0));
