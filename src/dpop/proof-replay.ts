import { createHash } from 'node:crypto';
import { Coalescer } from '../db/coalescer';
import { preparedStatement, type Database, type Queryable } from '../db/database';
import { PROOF_WINDOW_SECONDS, type CheckedProof } from './proof-check';

/**
 * Records the proofs of one batch, each once: a digest already recorded is left as it is and not
 * returned (the proof was presented before), however old its record: a record is only ever removed
 * by pruning, once its proof can no longer pass the iat check, so no clock decides a replay here.
 */
const SPEND_PROOFS = preparedStatement(
  'dpop.spend-proofs',
  `INSERT INTO dpop_proof_jtis (digest, expires_at)
   SELECT digest, to_timestamp(expires_at) FROM unnest($1::bytea[], $2::float8[]) AS proof(digest, expires_at)
   ON CONFLICT (digest) DO NOTHING
   RETURNING digest`,
);

/** A proof's replay record: its key (one key's jti, hashed: a jti is the client's choice, of any length up to 256) and its end. */
export interface DpopProofRecord {
  digest: Buffer;
  /**
   * Unix seconds: the end of the proof's acceptable life, its iat plus PROOF_WINDOW_SECONDS and the
   * second more that the check's whole-second clock still accepts; pruning adds CLOCK_TOLERANCE.
   */
  expiresAt: number;
}

/** The replay record of a checked proof, for a statement that spends it as part of its own work (an API key's login). */
export const replayRecordOf = (proof: CheckedProof): DpopProofRecord => ({
  digest: createHash('sha256').update(`${proof.jkt}.${proof.jti}`).digest(),
  expiresAt: proof.iat + PROOF_WINDOW_SECONDS + 1,
});

type Spend = DpopProofRecord;

/**
 * Refuses a DPoP proof presented before, on any instance (RFC 9449 §11.1), for as long as it could be
 * accepted: its iat plus PROOF_WINDOW_SECONDS. Kept in PostgreSQL rather than Redis, which is
 * optional here and, when it fails, is passed by (fail open): a replay check must not be.
 * Concurrent spends share one statement and one commit, as logins do (db/coalescer.ts).
 */
export class ProofReplay {
  private readonly batches: Coalescer<Spend, boolean>;

  constructor(db: Database) {
    this.batches = new Coalescer((spends) => spendProofs(db, spends), { maxInFlight: 1, maxBatch: 256 });
  }

  /** True the first time a proof is presented; false for a replay. */
  spend(proof: CheckedProof): Promise<boolean> {
    return this.batches.submit(replayRecordOf(proof));
  }
}

/** One row per spend; within a batch, only the first of equal digests can be new (an upsert may not touch a row twice). */
async function spendProofs(q: Queryable, spends: Spend[]): Promise<boolean[]> {
  const first = new Map<string, Spend>();
  for (const spend of spends) if (!first.has(spend.digest.toString('hex'))) first.set(spend.digest.toString('hex'), spend);
  const unique = [...first.values()];
  const { rows } = await q.queryPrepared<{ digest: Buffer }>(SPEND_PROOFS, [unique.map((s) => s.digest), unique.map((s) => s.expiresAt)]);
  const recorded = new Set(rows.map((row) => row.digest.toString('hex')));
  return spends.map((spend) => first.get(spend.digest.toString('hex')) === spend && recorded.has(spend.digest.toString('hex')));
}

/**
 * Forgets at most `batchSize` proofs that can no longer be presented (past their window, plus the
 * leeway between instances' clocks) and returns how many.
 */
export async function deleteSpentDpopProofs(q: Queryable, leewaySeconds: number, batchSize: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM dpop_proof_jtis
      WHERE digest IN (SELECT digest FROM dpop_proof_jtis WHERE expires_at < now() - make_interval(secs => $1) LIMIT $2)`,
    [leewaySeconds, batchSize],
  );
  return rowCount ?? 0;
}
