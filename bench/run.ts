/**
 * npm run bench [-- --quick] : the service against a floor per hot path, in one run.
 *
 * Builds the service (dist/) and the floor apps (dist/bench-floor/), seeds throwaway databases
 * (1,000 keys; for the scale scenarios 100 keys and 100,000 keys; for the million scenarios
 * 1,000,000 keys and as many live sessions, 100,000 under --quick), then for each scenario starts the service and its floor side
 * by side and loads them in turn with autocannon, interleaved over rounds (the order alternates per
 * round). Each round yields a ratio ours/floor; the round with the median ratio is reported.
 * Results: a markdown table on stdout and bench/results/latest.json.
 *
 * Flags: --quick (1 round, 1 s warm-up + 2 s per side, targets reported, not enforced),
 *        --duration S, --warmup S, --rounds N, --connections N, --only id,id, --bcrypt-cost N,
 *        --no-build, --cpu-prof (service and floors run with node --cpu-prof into bench/results/profiles/),
 *        --million-keys N (the million scenarios' keys and sessions: default 1,000,000, 100,000 with --quick).
 */
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { createDatabase, createFloorSessionsTable, dropDatabase, fillApiKeys, fillSessions, query } from './harness/database';
import { measureSide, withLeftover, type Measurement } from './harness/load';
import { killStartedProcesses } from '../scripts/harness/node-process';
import { ROOT } from './harness/processes';
import { createKey, mapLimit, passwordGrant, startFlags, startService, type ServiceSettings } from './harness/service';
import { scenarios, type BenchContext, type Dataset, type Scenario, type Side } from './scenarios';
import { millionScenarios, MILLION_IDS, pagingRun, PAGING_ID, type PagingResult } from './scenarios/million';
import { policyScenario } from './scenarios/key-policies';
import { webhooksScenario } from './scenarios/webhooks';
import { exchangeDpopScenarios } from './scenarios/exchange-dpop';
import { verificationScenarios, millionVerifyScenario } from './scenarios/verification';

const RSS_TARGET = 1.2;

interface Options {
  quick: boolean;
  duration: number;
  warmup: number;
  rounds: number;
  connections: number;
  only: string[] | undefined;
  bcryptCost: number;
  build: boolean;
  cpuProf: boolean;
  millionKeys: number;
}

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const num = (flag: string, fallback: number) => {
    const v = value(flag);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${flag} needs a number, got ${v}`);
    return n;
  };
  const only = value('--only')?.split(',');
  const known = [...scenarios.map((s) => s.id), policyScenario.id, ...exchangeDpopScenarios.map((s) => s.id), webhooksScenario.id, ...verificationScenarios.map((s) => s.id), ...MILLION_IDS, 'million-verify', PAGING_ID];
  const unknown = only?.filter((id) => !known.includes(id));
  if (unknown?.length) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return {
    quick,
    duration: num('--duration', quick ? 2 : 10),
    warmup: num('--warmup', quick ? 1 : 2),
    rounds: Math.max(1, Math.round(num('--rounds', quick ? 1 : 3))),
    connections: Math.max(1, Math.round(num('--connections', 32))),
    only,
    bcryptCost: num('--bcrypt-cost', 10),
    build: !argv.includes('--no-build'),
    cpuProf: argv.includes('--cpu-prof'),
    // A full run seeds the million; --quick (CI) a tenth of it, so it stays quick.
    millionKeys: Math.max(1000, Math.round(num('--million-keys', quick ? 100_000 : 1_000_000))),
  };
}

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** The service with its own build; the floors transpiled file by file next to it (dist/ is git-ignored). */
function build(): void {
  log('building the service (tsc -p tsconfig.build.json)');
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (tsc.status !== 0) throw new Error('service build failed');
  const out = path.join(ROOT, 'dist', 'bench-floor');
  mkdirSync(out, { recursive: true });
  const floorDir = path.join(__dirname, 'floor');
  for (const file of readdirSync(floorDir).filter((f) => f.endsWith('.ts'))) {
    const { outputText } = ts.transpileModule(readFileSync(path.join(floorDir, file), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      fileName: file,
    });
    writeFileSync(path.join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
}

/** A fresh database migrated by the service itself, with `exercised` keys made through the API and filler up to `total`. */
async function seed(db: string, total: number, exercised: number, service: ServiceSettings, timing?: { fillSeconds: number }): Promise<Dataset> {
  await createDatabase(db);
  const server = await startService(`seed-${db}`, db, service);
  let keys: Dataset['keys'];
  try {
    const admin = (await passwordGrant(server.baseUrl)).access_token;
    const names = Array.from({ length: exercised }, (_, i) => `bench-${String(i).padStart(3, '0')}`);
    keys = await mapLimit(names, 4, async (appname) => ({ appname, appkey: await createKey(server.baseUrl, admin, appname) }));
  } finally {
    await server.stop();
  }
  const began = performance.now();
  await fillApiKeys(db, total, Buffer.from(service.masterKey, 'base64'));
  const fillSeconds = (performance.now() - began) / 1000;
  if (timing) timing.fillSeconds = fillSeconds;
  const appnames = await query(db, async (c) => {
    const { rows } = await c.query<{ appname: string }>('SELECT appname FROM api_keys ORDER BY random() LIMIT 1000');
    return rows.map((r) => r.appname);
  });
  log(`seeded ${db}: ${total} keys (${total - exercised} in one INSERT ... SELECT, with VACUUM ANALYZE: ${fillSeconds.toFixed(1)} s)`);
  return { db, totalKeys: total, keys, appnames };
}

interface Round {
  ours: Measurement;
  floor: Measurement;
  ratio: number;
}

interface ScenarioResult {
  id: string;
  title: string;
  ours: string;
  floor: string;
  oursLabel: string;
  floorLabel: string;
  target: number;
  rounds: Round[];
  median: Round;
  rssRatio: number;
  throughputMet: boolean;
  rssMet: boolean;
  /** The scenario's own further target, when it has one. */
  extra?: { met: boolean; text: string };
}

async function runScenario(s: Scenario, ctx: BenchContext, o: Options): Promise<ScenarioResult> {
  log(`scenario ${s.id}: starting servers`);
  const { ours, floor } = await s.setup(ctx);
  const rounds: Round[] = [];
  try {
    for (let r = 0; r < o.rounds; r++) {
      const order = r % 2 === 0 ? [ours, floor] : [floor, ours];
      const m = new Map<string, Measurement>();
      for (const side of order) {
        const run = await measureOnceMore(s.id, side, o);
        const leftoverS = (await side.settle?.()) ?? 0;
        const result = leftoverS > 0 ? withLeftover(run, leftoverS) : run;
        m.set(side.label, result);
        log(
          `  ${s.id} round ${r + 1} ${side.label}: ${result.rps.toFixed(0)} req/s${leftoverS > 0 ? ` (over the run and ${leftoverS.toFixed(1)} s of leftover work)` : ''}, p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
            `non-2xx ${result.non2xx}, errors ${result.errors}, RSS ${result.peakRssMiB.toFixed(1)} MiB, ` +
            `server CPU ${result.serverCpuPct.toFixed(0)} %, driver CPU ${result.driverCpuPct.toFixed(0)} %`,
        );
      }
      const o1 = m.get(ours.label)!;
      const f1 = m.get(floor.label)!;
      rounds.push({ ours: o1, floor: f1, ratio: f1.rps > 0 ? o1.rps / f1.rps : 0 });
    }
  } finally {
    await Promise.all([ours.handle.stop(), floor.handle.stop()]);
  }
  const sorted = [...rounds].sort((a, b) => a.ratio - b.ratio);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  const peakOurs = Math.max(...rounds.map((r) => r.ours.peakRssMiB));
  const peakFloor = Math.max(...rounds.map((r) => r.floor.peakRssMiB));
  const rssRatio = peakFloor > 0 ? peakOurs / peakFloor : 0;
  const rssTarget = s.rssTarget === undefined ? RSS_TARGET : s.rssTarget;
  return {
    id: s.id,
    title: s.title,
    ours: s.ours,
    floor: s.floor,
    oursLabel: ours.label,
    floorLabel: floor.label,
    target: s.target,
    rounds,
    median,
    rssRatio,
    throughputMet: median.ratio >= s.target,
    rssMet: rssTarget === null || rssRatio <= rssTarget,
    extra: s.extra?.(median),
  };
}

/**
 * One side of one round. A side that got no answer at all (no 2xx, no other status) is measured once
 * more after the database has settled: on a busy machine a short window can fall entirely behind a
 * checkpoint (after seeding a hundred thousand keys, every commit waited on it and the server sat at
 * 1 % CPU). Any answer, a non-2xx included, stands; a service that answers nothing twice still fails.
 */
async function measureOnceMore(id: string, side: Side, o: Options): Promise<Measurement> {
  const measure = () => measureSide(side.handle.baseUrl, side.handle.pid, side.plan, o.warmup, o.duration, o.connections);
  const first = await measure();
  if (first.ok + first.non2xx > 0) return first;
  log(`  ${id} ${side.label}: no answer in ${o.duration} s (server CPU ${first.serverCpuPct.toFixed(0)} %); letting the database settle (CHECKPOINT), then once more`);
  await query('postgres', (c) => c.query('CHECKPOINT'));
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  return measure();
}

const f0 = (n: number) => n.toFixed(0);
const f1 = (n: number) => n.toFixed(1);
/** Ratios to three places: at two, a miss by less than 0.005 (0.946 against 0.95) reads as the target. */
const f3 = (n: number) => n.toFixed(3);

function table(results: ScenarioResult[], quick: boolean): string {
  const lines = [
    '| scenario | ours req/s | floor req/s | ratio (target) | ours p50 / p99 ms | floor p50 / p99 ms | non-2xx ours / floor | peak RSS MiB ours / floor (ratio) | result |',
    '|---|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const r of results) {
    const { ours, floor } = r.median;
    const peakOurs = Math.max(...r.rounds.map((x) => x.ours.peakRssMiB));
    const peakFloor = Math.max(...r.rounds.map((x) => x.floor.peakRssMiB));
    const bad = (m: Measurement) => m.non2xx + m.errors + m.timeouts;
    const extraMet = r.extra?.met ?? true;
    const verdict =
      r.throughputMet && r.rssMet && extraMet
        ? 'met'
        : [!r.throughputMet && 'req/s missed', !r.rssMet && 'RSS missed', !extraMet && 'see below'].filter(Boolean).join(', ');
    lines.push(
      `| ${r.title}${r.floorLabel === 'floor' ? '' : ` (${r.oursLabel} vs ${r.floorLabel})`} | ${f0(ours.rps)} | ${f0(floor.rps)} | ` +
        `${f3(r.median.ratio)} (>= ${r.target}) | ${ours.p50} / ${ours.p99} | ${floor.p50} / ${floor.p99} | ` +
        `${bad(ours)} / ${bad(floor)} | ${f1(peakOurs)} / ${f1(peakFloor)} (${f3(r.rssRatio)}) | ${quick ? `(quick) ${verdict}` : verdict} |`,
    );
  }
  const extras = results.filter((r) => r.extra).map((r) => `- ${r.title}: ${r.extra!.text}: ${r.extra!.met ? 'met' : 'missed'}`);
  return [...lines, ...(extras.length ? ['', ...extras] : [])].join('\n');
}

/** The paging run: its one pass, and the median ms of pages at three depths and how far apart they are. */
function pagingTable(p: PagingResult, quick: boolean): string {
  const verdict = p.met ? 'met' : 'flatness missed';
  return [
    '| paging | one pass: pages of 1000, time, median ms per page | median ms of the first / middle / last page | slowest / fastest depth (target) | result |',
    '|---|--:|---|--:|---|',
    `| ${p.keys.toLocaleString('en-US')} keys, \`after\` = last appname of the page before | ${p.pages}, ${f1(p.totalSeconds)} s, ${f1(p.medianPageMs)} | ` +
      `${f1(p.depths.start)} / ${f1(p.depths.middle)} / ${f1(p.depths.end)} (${p.rounds} rounds, random order) | ${f3(p.flatness)} (<= ${p.target}) | ${quick ? `(quick) ${verdict}` : verdict} |`,
  ].join('\n');
}

async function machine(db: string) {
  const pg = await query(db, async (c) => (await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v);
  const cpus = os.cpus();
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'} x ${cpus.length}`,
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres: pg,
  };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const selected = [...scenarios, policyScenario, ...exchangeDpopScenarios, webhooksScenario, ...verificationScenarios, ...millionScenarios(o.millionKeys), millionVerifyScenario(o.millionKeys)].filter(
    (s) => !o.only || o.only.includes(s.id),
  );
  const paging = !o.only || o.only.includes(PAGING_ID);
  if (o.build) build();
  const profileDir = path.join(__dirname, 'results', 'profiles');
  if (o.cpuProf) mkdirSync(profileDir, { recursive: true });
  const nodeFlags = startFlags();
  const service: ServiceSettings = {
    masterKey: randomBytes(32).toString('base64'),
    bcryptCost: o.bcryptCost,
    poolSize: 10,
    nodeArgs: [...nodeFlags, ...(o.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
  };
  const prefix = `bench_${process.pid}`;
  const dbs = { main: `${prefix}_k1000`, small: `${prefix}_k100`, large: `${prefix}_k100000`, million: `${prefix}_million_k${o.millionKeys}` };
  const created: string[] = [];
  const cleanup = async () => {
    killStartedProcesses();
    for (const db of created) await dropDatabase(db).catch((err: Error) => log(`could not drop ${db}: ${err.message}`));
  };
  process.once('SIGINT', () => {
    log('interrupted; cleaning up');
    void cleanup().finally(() => process.exit(130));
  });

  const results: ScenarioResult[] = [];
  let pagingResult: PagingResult | undefined;
  const millionSeed = { keys: o.millionKeys, fillSeconds: 0, sessionsSeconds: 0 };
  let info: Awaited<ReturnType<typeof machine>> | undefined;
  try {
    const needScale = selected.some((s) => s.id.startsWith('scale'));
    const needMillion = paging || selected.some((s) => s.id.startsWith('million'));
    // Seeding with the 'seed' dataset runs as the driver: the 100,000-key table only when a scale scenario runs.
    const exercised = o.connections;
    created.push(dbs.main);
    const main = await seed(dbs.main, 1000, exercised, service);
    await createFloorSessionsTable(dbs.main);
    let small = main;
    let large = main;
    let million = main;
    if (needScale || needMillion) {
      created.push(dbs.small);
      small = await seed(dbs.small, 100, exercised, service);
    }
    if (needScale) {
      created.push(dbs.large);
      large = await seed(dbs.large, 100_000, exercised, service);
    }
    if (needMillion) {
      created.push(dbs.million);
      million = await seed(dbs.million, o.millionKeys, exercised, service, millionSeed);
      const began = performance.now();
      const sessions = await fillSessions(dbs.million);
      millionSeed.sessionsSeconds = (performance.now() - began) / 1000;
      log(`seeded ${dbs.million}: ${sessions} live sessions in one INSERT ... SELECT, with VACUUM ANALYZE: ${millionSeed.sessionsSeconds.toFixed(1)} s`);
    }
    info = await machine(dbs.main);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ctx: BenchContext = {
      datasets: { main, small, large, million },
      service,
      floorPrivateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      connections: o.connections,
    };
    for (const s of selected) results.push(await runScenario(s, ctx, o));
    if (paging) {
      log(`${PAGING_ID}: paging through ${o.millionKeys} keys`);
      pagingResult = await pagingRun(ctx, log);
    }
  } finally {
    await cleanup();
  }

  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const settings = `${o.rounds} round(s), ${o.warmup} s warm-up + ${o.duration} s per side, ${o.connections} connections, bcrypt cost ${o.bcryptCost}`;
  const markdown = table(results, o.quick) + (pagingResult ? `\n\n${pagingTable(pagingResult, o.quick)}` : '');
  const millionLine = results.some((r) => r.id.startsWith('million')) || pagingResult
    ? `Million scenarios: ${o.millionKeys.toLocaleString('en-US')} keys${o.quick ? ' (--quick: 100,000 unless --million-keys; a full run seeds 1,000,000)' : ''}, ` +
      `seeded in one INSERT ... SELECT in ${millionSeed.fillSeconds.toFixed(1)} s, and as many live sessions in ${millionSeed.sessionsSeconds.toFixed(1)} s (each with VACUUM ANALYZE).\n`
    : '';
  process.stdout.write(
    `\n${markdown}\n\n` +
      `Command: \`${command}\` (${settings}); ratios are ours/floor req/s (2xx only) of the median round.\n` +
      `Node flags, on both sides (npm start's): ${nodeFlags.join(' ') || 'none'}.\n` +
      millionLine +
      `Machine: ${info?.cpu}, ${info?.memoryGiB} GiB, ${info?.os}, Node ${info?.node}, PostgreSQL ${info?.postgres}.\n`,
  );
  const outFile = path.join(__dirname, 'results', 'latest.json');
  writeFileSync(
    outFile,
    `${JSON.stringify({ date: new Date().toISOString(), command, options: o, nodeFlags, machine: info, rssTarget: RSS_TARGET, results, million: millionSeed, paging: pagingResult, markdown }, null, 2)}\n`,
  );
  log(`wrote ${path.relative(ROOT, outFile)}`);

  const broken = results.filter((r) => r.rounds.some((x) => x.ours.ok === 0 || x.floor.ok === 0 || x.ours.non2xx + x.ours.errors > 0 || x.floor.non2xx + x.floor.errors > 0));
  if (broken.length) {
    log(`non-2xx answers or no successful request in: ${broken.map((r) => r.id).join(', ')}`);
    process.exitCode = 1;
  }
  const missed = results.filter((r) => !r.throughputMet || !r.rssMet || r.extra?.met === false).map((r) => r.id);
  if (pagingResult && !pagingResult.met) missed.push(PAGING_ID);
  if (missed.length && !o.quick) {
    log(`targets missed: ${missed.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch(async (err: unknown) => {
  killStartedProcesses();
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
