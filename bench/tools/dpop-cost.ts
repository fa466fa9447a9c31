/**
 * npx tsx bench/tools/dpop-cost.ts [requests] [rounds]
 * What a DPoP proof adds to a client-credentials request, as the service's CPU time per request
 * (user + system, every thread, and the main thread's alone): on a machine shared with other work, throughput swings with the
 * neighbours, while the CPU a request costs the service moves far less. Builds nothing: run
 * `npm run build` (or the bench once) first. Each round sends `requests` (default 4,000) requests
 * of each kind, 16 at a time, the kinds alternating; the proofs are signed before each run.
 */
import { generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import autocannon from 'autocannon';
import { createDatabase, dropDatabase } from '../harness/database';
import { readFileSync } from 'node:fs';
import { cpuSeconds } from '../harness/processes';
import { createKey, ISSUER, mapLimit, passwordGrant, startFlags, startService } from '../harness/service';
import { killStartedProcesses } from '../../scripts/harness/node-process';

const [requestsArg, roundsArg] = process.argv.slice(2);
const REQUESTS = Number(requestsArg ?? 4000);
const ROUNDS = Number(roundsArg ?? 3);
const TOKEN_PATH = '/oauth2/token';

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** The main thread's user + system CPU seconds (its own stat: the JavaScript runs there; libuv's pool does not). */
function mainThreadSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function proofs(count: number): string[] {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const header = b64url(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } }));
  const iat = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, () => {
    const input = `${header}.${b64url(JSON.stringify({ jti: randomUUID(), htm: 'POST', htu: `${ISSUER}${TOKEN_PATH}`, iat }))}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  });
}

async function measure(url: string, pid: number, keys: { appname: string; appkey: string }[], dpop: boolean) {
  const signed = dpop ? proofs(REQUESTS) : [];
  let i = 0;
  const requests: autocannon.Request[] = [
    {
      method: 'POST',
      path: TOKEN_PATH,
      setupRequest: (req) => {
        const key = keys[i % keys.length]!;
        const headers: Record<string, string> = {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${key.appname}:${key.appkey}`).toString('base64')}`,
        };
        if (dpop) headers.dpop = signed[i]!;
        i += 1;
        return { ...req, headers, body: 'grant_type=client_credentials' };
      },
    },
  ];
  const cpu0 = cpuSeconds(pid);
  const main0 = mainThreadSeconds(pid);
  const result = await new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ url, connections: 16, pipelining: 1, amount: REQUESTS, requests }, (err, r) => (err ? reject(err) : resolve(r))),
  );
  const per = (seconds: number) => (seconds * 1e6) / result['2xx'];
  return { usPerRequest: per(cpuSeconds(pid) - cpu0), mainUsPerRequest: per(mainThreadSeconds(pid) - main0), ok: result['2xx'], bad: result.non2xx + result.errors, rps: result.requests.average };
}

async function main(): Promise<void> {
  const db = `dpop_cost_${process.pid}`;
  await createDatabase(db);
  const settings = { masterKey: randomBytes(32).toString('base64'), bcryptCost: 10, poolSize: 10, nodeArgs: startFlags() };
  const service = await startService('dpop-cost', db, settings);
  try {
    const admin = (await passwordGrant(service.baseUrl)).access_token;
    const keys = await mapLimit(Array.from({ length: 16 }, (_, n) => `cost-${n}`), 4, async (appname) => ({ appname, appkey: await createKey(service.baseUrl, admin, appname) }));
    await measure(service.baseUrl, service.pid, keys, true); // warm-up, both paths
    await measure(service.baseUrl, service.pid, keys, false);
    const rows: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const dpop of round % 2 ? [false, true] : [true, false]) {
        const m = await measure(service.baseUrl, service.pid, keys, dpop);
        rows.push(`round ${round} ${dpop ? 'DPoP  ' : 'bearer'}: ${m.usPerRequest.toFixed(0)} us CPU per request, ${m.mainUsPerRequest.toFixed(0)} us on the main thread (${m.ok} ok, ${m.bad} bad, ${m.rps.toFixed(0)} req/s)`);
        console.log(rows.at(-1));
      }
    }
  } finally {
    await service.stop();
    await dropDatabase(db);
  }
}

main().catch((err: unknown) => {
  killStartedProcesses();
  console.error(err);
  process.exit(1);
});
