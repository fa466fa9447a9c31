/**
 * node --expose-gc -r tsx/cjs bench/tools/key-rate-counter-memory.ts
 * What the in-memory counters of the keys' rate limits hold on the heap: docs/performance.md, "key
 * rate limits". Fills MemoryKeyRateCounter to its bound with keys named as the service names them (a
 * key's id, a UUID as node-postgres returns it), then counts five times as many keys more, and reports
 * the heap growth per counter at the bound and after it (the bound must hold).
 */
import { randomBytes } from 'node:crypto';
import { MemoryKeyRateCounter, MEMORY_COUNTERS } from '../../src/key-policies/rate-counter';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/** A UUID as its own flat string, as pg's text parser returns one (crypto.randomUUID's come out of a shared cache). */
const uuid = () => randomBytes(16).toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

function heapAfterGc(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const counter = new MemoryKeyRateCounter();
  const window = Math.floor(Date.now() / 60_000);
  const base = heapAfterGc();
  for (let i = 0; i < MEMORY_COUNTERS; i++) await counter.hit(uuid(), 60, window);
  const atBound = heapAfterGc() - base;
  for (let i = 0; i < 5 * MEMORY_COUNTERS; i++) await counter.hit(uuid(), 60, window);
  const afterMore = heapAfterGc() - base;
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(2);
  console.log(`${counter.size} counters at the bound (${MEMORY_COUNTERS}): ${mib(atBound)} MiB, ${(atBound / MEMORY_COUNTERS).toFixed(0)} B per counter`);
  console.log(`after ${6 * MEMORY_COUNTERS} keys counted: ${counter.size} counters, ${mib(afterMore)} MiB`);
}

void main();
