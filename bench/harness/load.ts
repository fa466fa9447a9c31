import autocannon from 'autocannon';
import { cpuSeconds, sampleRss, settle } from './processes';

export interface LoadPlan {
  /** Path for the report; each request is built by `requests`. */
  requests: autocannon.Request[];
}

export interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
  peakRssMiB: number;
  serverCpuPct: number;
  driverCpuPct: number;
}

/** A side's run charged with the seconds its leftover work took after it (Side.settle): its req/s is over both. */
export const withLeftover = (m: Measurement, seconds: number): Measurement => ({ ...m, rps: m.ok / (m.durationS + seconds), durationS: m.durationS + seconds });

function run(url: string, plan: LoadPlan, seconds: number, connections: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, pipelining: 1, duration: seconds, timeout: 30, requests: plan.requests }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

/**
 * One side of one round: an unmeasured warm-up (JIT, pool, caches), then the measured run.
 * Throughput counts 2xx only; RSS is the peak sampled over the whole side, warm-up included.
 */
export async function measureSide(
  url: string,
  pid: number,
  nextPlan: () => Promise<LoadPlan>,
  warmupSeconds: number,
  seconds: number,
  connections: number,
): Promise<Measurement> {
  const rss = sampleRss(pid);
  await settle(pid);
  if (warmupSeconds > 0) {
    await run(url, await nextPlan(), warmupSeconds, connections);
    await settle(pid);
  }
  const plan = await nextPlan();
  const serverCpu0 = cpuSeconds(pid);
  const driverCpu0 = process.cpuUsage();
  const started = process.hrtime.bigint();
  const result = await run(url, plan, seconds, connections);
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const driverCpu = process.cpuUsage(driverCpu0);
  const serverCpu = cpuSeconds(pid) - serverCpu0;
  const peak = rss.stop();
  const durationS = result.duration || wall;
  return {
    rps: result['2xx'] / durationS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS,
    peakRssMiB: peak / 1024 / 1024,
    serverCpuPct: (100 * serverCpu) / wall,
    driverCpuPct: (100 * (driverCpu.user + driverCpu.system)) / 1e6 / wall,
  };
}
