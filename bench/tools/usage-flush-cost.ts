/**
 * npx tsx bench/tools/usage-flush-cost.ts [keys] [flushes]
 * What one usage flush costs: the multi-row upsert an instance runs every USAGE_FLUSH_SECONDS (5 by
 * default) with a count for each of `keys` keys (default 1,000, the exchange benchmark's), timed
 * `flushes` times (default 30) against rows already there, as in a busy hour. With the counting's
 * own main-thread time in a CPU profile, it puts a figure on what usage counting costs the exchange
 * where the benchmark's two-service ratio is too noisy to (docs/performance.md, "verification and usage").
 */
import { randomBytes } from 'node:crypto';
import { Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrate';
import { createLogger } from '../../src/logger';
import { addUsage } from '../../src/usage/usage.repository';
import { createDatabase, databaseUrl, dropDatabase, fillApiKeys } from '../harness/database';

const [keysArg, flushesArg] = process.argv.slice(2);
const KEYS = Number(keysArg ?? 1000);
const FLUSHES = Number(flushesArg ?? 30);

async function main(): Promise<void> {
  const name = `bench_usage_flush_${process.pid}`;
  await createDatabase(name);
  const logger = createLogger('silent');
  const db = new Database({ url: databaseUrl(name) }, logger);
  try {
    await migrate(db, logger);
    await fillApiKeys(name, KEYS, randomBytes(32));
    const { rows } = await db.query<{ id: string }>('SELECT id FROM api_keys');
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600;
    const counts = rows.map((row) => ({ keyId: row.id, hour, kind: 'tokens' as const, n: 60 }));
    await addUsage(db, counts);
    const ms: number[] = [];
    for (let i = 0; i < FLUSHES; i++) {
      const started = process.hrtime.bigint();
      await addUsage(db, counts);
      ms.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(2);
    process.stdout.write(`a flush of ${counts.length} counts, ${FLUSHES} times: median ${at(0.5)} ms, fastest ${at(0)}, slowest ${at(1)}\n`);
  } finally {
    await db.close();
    await dropDatabase(name);
  }
}

void main();
