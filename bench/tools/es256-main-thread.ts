/**
 * npx tsx bench/tools/es256-main-thread.ts
 * What an ES256 signature and verification cost the main thread done in place (sync) and handed to
 * libuv's thread pool (callback form): docs/performance.md, "ES256 in libuv's thread pool (tried and
 * dropped)". Linux only: the main thread's CPU time is read from /proc.
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';

const OPERATIONS = 20_000;
const IN_FLIGHT = 32;

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const data = Buffer.from('x'.repeat(400));
const signing = { key: privateKey, dsaEncoding: 'ieee-p1363' } as const;
const verifying = { key: publicKey, dsaEncoding: 'ieee-p1363' } as const;
const signature = sign('sha256', data, signing);

/** The main thread's user + system CPU time in ms (fields 14 and 15 of its stat, in 10 ms ticks). */
function mainThreadCpuMs(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function measure(name: string, operation: () => Promise<unknown>): Promise<void> {
  const cpuBefore = mainThreadCpuMs();
  const wallBefore = performance.now();
  for (let done = 0; done < OPERATIONS; done += IN_FLIGHT) await Promise.all(Array.from({ length: IN_FLIGHT }, operation));
  const perOperation = (ms: number) => ((ms * 1000) / OPERATIONS).toFixed(1);
  console.log(`${name.padEnd(13)} main thread ${perOperation(mainThreadCpuMs() - cpuBefore)} µs/op, wall ${perOperation(performance.now() - wallBefore)} µs/op`);
}

const inPool = <T>(start: (done: (err: Error | null, value: T) => void) => void) =>
  new Promise<T>((resolve, reject) => start((err, value) => (err ? reject(err) : resolve(value))));

async function main(): Promise<void> {
  for (let round = 1; round <= 2; round++) {
    await measure('sign, sync', async () => sign('sha256', data, signing));
    await measure('sign, pool', () => inPool<Buffer>((done) => sign('sha256', data, signing, done)));
    await measure('verify, sync', async () => verify('sha256', data, verifying, signature));
    await measure('verify, pool', () => inPool<boolean>((done) => verify('sha256', data, verifying, signature, done)));
  }
}

void main();
