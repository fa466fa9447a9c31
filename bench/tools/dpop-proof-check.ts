/**
 * npx tsx bench/tools/dpop-proof-check.ts [proofs]
 * What checking one DPoP proof (RFC 9449 §4.3 but for replay) costs, 32 in flight, three ways:
 * - jose's jwtVerify with EmbeddedJWK: the key imported from the header on every proof;
 * - jose's jwtVerify with the key kept: what the service did until it checked signatures in place
 *   (it verifies on libuv's thread pool);
 * - the service's ProofChecker (src/dpop/proof-check.ts): the key imported and thumbprinted by jose
 *   once per header, each signature checked in place by node:crypto (src/dpop/proof-signature.ts).
 * Both the main thread's CPU (where the service's JavaScript runs; read from /proc, Linux only) and the
 * whole process's are reported, per proof, for ES256, EdDSA (Ed25519) and RS256.
 * docs/token-exchange-and-dpop.md, "What the proof check costs".
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EmbeddedJWK, exportJWK, jwtVerify, SignJWT } from 'jose';
import { ProofChecker } from '../../src/dpop/proof-check';

const PROOFS = Number(process.argv[2] ?? 6_000);
const IN_FLIGHT = 32;
const HTU = 'https://issuer.example/oauth2/token';

type Alg = 'ES256' | 'EdDSA' | 'RS256';

function keyPair(alg: Alg) {
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  if (alg === 'EdDSA') return generateKeyPairSync('ed25519');
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

async function proofsFor(alg: Alg): Promise<{ proofs: string[]; publicKey: KeyObject }> {
  const { privateKey, publicKey } = keyPair(alg);
  const jwk = await exportJWK(publicKey);
  const iat = Math.floor(Date.now() / 1000);
  const proofs = await Promise.all(
    Array.from({ length: PROOFS }, () => new SignJWT({ htm: 'POST', htu: HTU, jti: randomUUID(), iat }).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk }).sign(privateKey)),
  );
  return { proofs, publicKey };
}

/** The main thread's user + system CPU in µs (fields 14 and 15 of its stat, in 10 ms ticks). */
function mainThreadMicros(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const claimsHold = (p: Record<string, unknown>) => p.htm === 'POST' && p.htu === HTU && typeof p.jti === 'string' && typeof p.iat === 'number';

async function measure(name: string, proofs: string[], check: (proof: string) => Promise<unknown>): Promise<void> {
  const main0 = mainThreadMicros();
  const cpu0 = process.cpuUsage();
  for (let next = 0; next < proofs.length; next += IN_FLIGHT) {
    const results = await Promise.all(proofs.slice(next, next + IN_FLIGHT).map(check));
    if (!results.every(Boolean)) throw new Error(`${name}: a good proof was refused`);
  }
  const cpu = process.cpuUsage(cpu0);
  const per = (micros: number) => (micros / proofs.length).toFixed(0).padStart(5);
  console.log(`  ${name.padEnd(44)} main thread ${per(mainThreadMicros() - main0)} µs, process ${per(cpu.user + cpu.system)} µs per proof`);
}

async function main(): Promise<void> {
  for (const alg of ['ES256', 'EdDSA', 'RS256'] as const) {
    const { proofs, publicKey } = await proofsFor(alg);
    console.log(alg);
    for (let round = 1; round <= 2; round++) {
      const checker = new ProofChecker();
      const now = Math.floor(Date.now() / 1000);
      await measure('jose jwtVerify + EmbeddedJWK', proofs, async (p) => claimsHold((await jwtVerify(p, EmbeddedJWK, { algorithms: [alg], typ: 'dpop+jwt' })).payload));
      await measure('jose jwtVerify, key kept (thread pool)', proofs, async (p) => claimsHold((await jwtVerify(p, publicKey, { algorithms: [alg], typ: 'dpop+jwt' })).payload));
      await measure('ProofChecker (key kept, in place)', proofs, (p) => checker.check(p, { method: 'POST', uri: HTU }, now));
    }
  }
}

void main();
