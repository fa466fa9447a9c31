/**
 * npx tsx bench/tools/dpop-proof-check.ts
 * What checking one DPoP proof (RFC 9449 §4.3: signature by the embedded JWK, typ, alg, claims) costs
 * the main thread, three ways: jose's jwtVerify with EmbeddedJWK (imports the JWK on every call),
 * jose's jwtVerify with the imported key kept per JWK, and node:crypto directly with the key kept.
 * Plus the RFC 7638 thumbprint: jose's calculateJwkThumbprint against one SHA-256 of our own.
 * docs/token-exchange-and-dpop.md, "What the proof check costs".
 */
import { createHash, createPublicKey, generateKeyPairSync, randomUUID, verify, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, exportJWK, importJWK, jwtVerify, SignJWT, type JWK, type KeyLike } from 'jose';

const PROOFS = 4_000;
const ROUNDS = 3;
const HTU = 'https://issuer.example/oauth2/token';

type Alg = 'ES256' | 'EdDSA' | 'RS256';

function keyPair(alg: Alg) {
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  if (alg === 'EdDSA') return generateKeyPairSync('ed25519');
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

async function proofsFor(alg: Alg): Promise<{ proofs: string[]; jwk: JWK }> {
  const { privateKey, publicKey } = keyPair(alg);
  const jwk = await exportJWK(publicKey);
  const now = Math.floor(Date.now() / 1000);
  const proofs = await Promise.all(
    Array.from({ length: PROOFS }, () =>
      new SignJWT({ htm: 'POST', htu: HTU, jti: randomUUID(), iat: now }).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk }).sign(privateKey),
    ),
  );
  return { proofs, jwk };
}

const claimsHold = (p: Record<string, unknown>) => p.htm === 'POST' && p.htu === HTU && typeof p.jti === 'string' && typeof p.iat === 'number';

const joseOptions = (alg: Alg) => ({ typ: 'dpop+jwt', algorithms: [alg], maxTokenAge: 60, clockTolerance: 60 });

async function joseEmbedded(alg: Alg, proof: string): Promise<boolean> {
  const { payload } = await jwtVerify(proof, EmbeddedJWK, joseOptions(alg));
  return claimsHold(payload);
}

const joseKeys = new Map<string, KeyLike | Uint8Array>();
async function joseKept(alg: Alg, proof: string): Promise<boolean> {
  const { payload } = await jwtVerify(
    proof,
    async (header) => {
      const id = JSON.stringify(header.jwk);
      let key = joseKeys.get(id);
      if (!key) joseKeys.set(id, (key = await importJWK(header.jwk as JWK, header.alg)));
      return key;
    },
    joseOptions(alg),
  );
  return claimsHold(payload);
}

const nodeKeys = new Map<string, KeyObject>();
const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
function nodeDirect(alg: Alg, proof: string): boolean {
  const [h, p, s] = proof.split('.') as [string, string, string];
  const header = decode(h);
  if (header.typ !== 'dpop+jwt' || header.alg !== alg) return false;
  const id = JSON.stringify(header.jwk);
  let key = nodeKeys.get(id);
  if (!key) nodeKeys.set(id, (key = createPublicKey({ key: header.jwk as import('node:crypto').JsonWebKey, format: 'jwk' })));
  const data = Buffer.from(`${h}.${p}`);
  const signature = Buffer.from(s, 'base64url');
  const ok =
    alg === 'ES256'
      ? verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature)
      : alg === 'EdDSA'
        ? verify(null, data, key, signature)
        : verify('sha256', data, key, signature);
  return ok && claimsHold(decode(p));
}

function ourThumbprint(jwk: JWK): string {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : jwk.kty === 'OKP' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x } : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

async function measure(name: string, proofs: string[], check: (proof: string) => unknown): Promise<void> {
  const began = performance.now();
  for (const proof of proofs) if (!(await check(proof))) throw new Error(`${name}: a good proof was refused`);
  console.log(`  ${name.padEnd(34)} ${(((performance.now() - began) * 1000) / proofs.length).toFixed(1).padStart(7)} µs per proof`);
}

async function main(): Promise<void> {
  for (const alg of ['ES256', 'EdDSA', 'RS256'] as const) {
    const { proofs, jwk } = await proofsFor(alg);
    console.log(`${alg}`);
    for (let round = 1; round <= ROUNDS; round++) {
      await measure('jose jwtVerify + EmbeddedJWK', proofs, (p) => joseEmbedded(alg, p));
      await measure('jose jwtVerify + key kept per JWK', proofs, (p) => joseKept(alg, p));
      await measure('node:crypto + key kept per JWK', proofs, (p) => nodeDirect(alg, p));
      await measure('jose calculateJwkThumbprint', proofs, () => calculateJwkThumbprint(jwk, 'sha256'));
      await measure('thumbprint by node:crypto SHA-256', proofs, () => ourThumbprint(jwk));
    }
  }
}

void main();
