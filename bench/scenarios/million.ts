/**
 * The million-key scenarios (contract, "Running at scale"): the service on a table of `count` keys
 * and as many live sessions, against the same service with 100 keys, for one-key reads, the API-key
 * exchange and the client-credentials grant; and the time per page of paging through every key with
 * `after`. `count` is 1,000,000 in a full run and 100,000 under --quick (bench/run.ts, --million-keys).
 */
import { startService } from '../harness/service';
import { clientCredentialsBasic, exchangeRequests, readSide, serviceBearer, type BenchContext, type Scenario } from './index';

export const MILLION_IDS = ['million-read', 'million-exchange', 'million-client-credentials'] as const;
export const PAGING_ID = 'million-paging';

/** The slowest depth's median page time (start, middle, end) may be at most this times the fastest's. */
export const PAGING_FLATNESS_TARGET = 1.25;

const thousands = (n: number) => n.toLocaleString('en-US');

/** The three throughput scenarios on `count` keys and sessions (the dataset `million` of the context). */
export function millionScenarios(count: number): Scenario[] {
  const label = `ours@${count >= 1_000_000 ? `${count / 1_000_000}M` : `${count / 1000}k`}`;
  const start = async (ctx: BenchContext) => {
    const { million, small } = ctx.datasets;
    const big = await startService(label, million.db, ctx.service);
    const little = await startService('ours@100', small.db, ctx.service);
    return { big, little, million, small };
  };
  return [
    {
      id: 'million-read',
      title: `${thousands(count)} keys: read`,
      ours: `GET /api/v1/api-keys/{appname} with ${thousands(count)} keys and live sessions`,
      floor: 'the same service and scenario with 100 keys',
      target: 0.9,
      async setup(ctx) {
        const { big, little, million, small } = await start(ctx);
        return { ours: await readSide(big, million), floor: await readSide(little, small) };
      },
    },
    {
      id: 'million-exchange',
      title: `${thousands(count)} keys: api-key exchange`,
      ours: `POST /api/v1/auth/token with ${thousands(count)} keys and live sessions`,
      floor: 'the same service and scenario with 100 keys',
      target: 0.9,
      async setup(ctx) {
        const { big, little, million, small } = await start(ctx);
        return {
          ours: { label: big.label, handle: big, plan: () => Promise.resolve({ requests: exchangeRequests(million.keys) }) },
          floor: { label: little.label, handle: little, plan: () => Promise.resolve({ requests: exchangeRequests(small.keys) }) },
        };
      },
    },
    {
      id: 'million-client-credentials',
      title: `${thousands(count)} keys: client credentials`,
      ours: `POST /oauth2/token (client_credentials, client_secret_basic) with ${thousands(count)} keys and live sessions`,
      floor: 'the same service and scenario with 100 keys',
      target: 0.9,
      async setup(ctx) {
        const { big, little, million, small } = await start(ctx);
        return {
          ours: { label: big.label, handle: big, plan: () => Promise.resolve({ requests: clientCredentialsBasic('/oauth2/token', million.keys) }) },
          floor: { label: little.label, handle: little, plan: () => Promise.resolve({ requests: clientCredentialsBasic('/oauth2/token', small.keys) }) },
        };
      },
    },
  ];
}

export interface PagingResult {
  keys: number;
  pages: number;
  pageSize: number;
  /** The whole paging run, first page to last, and its median ms per page. */
  totalSeconds: number;
  medianPageMs: number;
  /** Rounds of the sampling pass: one page at each depth per round, in a random order. */
  rounds: number;
  /** Median ms of the first page, the middle one and the last full one. */
  depths: { start: number; middle: number; end: number };
  /** The slowest depth's median over the fastest's. */
  flatness: number;
  target: number;
  met: boolean;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
};

/** Rounds of the sampling pass: 3 pages each, about 20 ms a page unloaded. */
const SAMPLING_ROUNDS = 60;

/**
 * Keyset paging reads one index range per page wherever it starts, so the time per page must not
 * grow with the depth. First one client pages through every key of the `million` dataset, 1,000 a
 * page, each page's `after` the last appname of the page before (which shows that every key is
 * reached, and warms the service up), keeping the cursors of the first page, the middle one and the
 * last full one. Then, round after round, it fetches those three pages in a random order, so that
 * whatever else the machine does at a moment weighs on every depth alike (timing the pages of the
 * one pass would compare the start of the run with its end, not shallow with deep pages, and a fixed
 * order would favour one position). Each page is timed from request to last byte; the medians of the
 * three depths are compared.
 */
export async function pagingRun(ctx: BenchContext, log: (message: string) => void): Promise<PagingResult> {
  const data = ctx.datasets.million;
  const server = await startService('ours-paging', data.db, ctx.service);
  const pageSize = 1000;
  const passTimes: number[] = [];
  const cursors = new Map<number, string | undefined>();
  const samples: number[][] = [[], [], []];
  let seen = 0;
  const began = performance.now();
  let totalSeconds = 0;
  try {
    const authorization = `Bearer ${await serviceBearer(server.baseUrl, data.keys[0]!)}`;
    const page = async (after: string | undefined) => {
      const query = new URLSearchParams({ limit: String(pageSize), ...(after === undefined ? {} : { after }) });
      const t0 = performance.now();
      const res = await fetch(`${server.baseUrl}/api/v1/api-keys?${query}`, { headers: { authorization } });
      const body = (await res.json()) as { data?: { appname: string }[] };
      const ms = performance.now() - t0;
      if (res.status !== 200 || !body.data) throw new Error(`paging: a page after ${after ?? '(none)'} answered ${res.status}`);
      return { ms, appnames: body.data.map((k) => k.appname) };
    };
    const totalPages = Math.ceil(data.totalKeys / pageSize);
    const fullPages = Math.floor(data.totalKeys / pageSize);
    const depths = [0, Math.floor(totalPages / 2), fullPages - 1];
    let after: string | undefined;
    for (;;) {
      if (depths.includes(passTimes.length)) cursors.set(passTimes.length, after);
      const { ms, appnames } = await page(after);
      if (appnames.length === 0) break;
      passTimes.push(ms);
      seen += appnames.length;
      after = appnames[appnames.length - 1];
      if (appnames.length < pageSize) break;
      if (passTimes.length % 100 === 0) log(`  paging: ${thousands(seen)} keys, ${passTimes.length} pages`);
    }
    totalSeconds = (performance.now() - began) / 1000;
    if (seen !== data.totalKeys) throw new Error(`paging: saw ${seen} keys of ${data.totalKeys}`);
    log(`  paging: every key in ${passTimes.length} pages, ${totalSeconds.toFixed(1)} s; sampling pages ${depths.map((d) => d + 1).join(', ')} ${SAMPLING_ROUNDS} times`);
    for (let round = 0; round < SAMPLING_ROUNDS; round++) {
      const order = [0, 1, 2];
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const d of order) {
        const { ms, appnames } = await page(cursors.get(depths[d]!));
        if (appnames.length !== pageSize) throw new Error(`paging: page ${depths[d]! + 1} has ${appnames.length} keys`);
        samples[d]!.push(ms);
      }
    }
  } finally {
    await server.stop();
  }
  const [start, middle, end] = samples.map(median) as [number, number, number];
  const flatness = Math.max(start, middle, end) / Math.min(start, middle, end);
  return {
    keys: seen,
    pages: passTimes.length,
    pageSize,
    totalSeconds,
    medianPageMs: median(passTimes),
    rounds: SAMPLING_ROUNDS,
    depths: { start, middle, end },
    flatness,
    target: PAGING_FLATNESS_TARGET,
    met: flatness <= PAGING_FLATNESS_TARGET,
  };
}
