import { preparedStatement, type Queryable } from '../db/database';
import type { Prefixed } from '../db/prefixed-columns';
import type { Role } from '../shared/principals';
import { creditsAt, POLICY_COLUMN_NAMES, policyColumns, type PolicyRow } from '../key-policies/policy-sql';
import { livePrincipalsWhere, type LivePrincipalRow } from '../sessions/liveness';
import { previousAppkeyValid, previousGeneration } from '../sessions/appkey-generations';

/** A key as verification reads it: found by the digest of what was presented. */
export interface VerifiedKeyRow extends PolicyRow {
  id: string;
  appname: string;
  role: Role | null;
  /** The appkey generation the digest matched: the current one, or the previous one in its grace. */
  generation: number;
  last_used: number | null;
  /** Credits at the moment asked, after any refill due; null: none. */
  credits: number | null;
}

const columns = (generation: string, now: string) =>
  `id, appname, role, ${generation} AS generation, extract(epoch FROM last_used)::float8 AS last_used,
   ${creditsAt('api_keys', `to_timestamp(${now})`)}::float8 AS credits, ${policyColumns('api_keys')}`;

/**
 * One key by SHA-256 digest `digest` (an SQL expression) at `now` (Unix seconds): the current
 * appkey's (unique index), else the previous appkey's while its grace lasts, as the token routes
 * accept it (partial unique index).
 */
const byDigest = (digest: string, now: string) =>
  `(SELECT ${columns('key_generation', now)} FROM api_keys WHERE key_digest = ${digest})
   UNION ALL
   (SELECT ${columns(previousGeneration('api_keys'), now)} FROM api_keys WHERE previous_key_digest = ${digest} AND ${previousAppkeyValid('api_keys')})
   LIMIT 1`;

const FIND_BY_DIGEST = preparedStatement('verification.find-by-digest', byDigest('$1', '$2'));

export async function findKeyByDigest(q: Queryable, digest: Buffer, now: number): Promise<VerifiedKeyRow | undefined> {
  const { rows } = await q.queryPrepared<VerifiedKeyRow>(FIND_BY_DIGEST, [digest, now]);
  return rows[0];
}

/** Every column of VerifiedKeyRow by name: `satisfies` keeps out a name it lacks, and the check below one it has that is left out. */
const VERIFIED_KEY_COLUMNS = ['id', 'appname', 'role', 'generation', 'last_used', 'credits', ...POLICY_COLUMN_NAMES] as const satisfies readonly (keyof VerifiedKeyRow)[];
type UnlistedColumn = Exclude<keyof VerifiedKeyRow, (typeof VERIFIED_KEY_COLUMNS)[number]>;
// Compiles only while UnlistedColumn is never: a column added to VerifiedKeyRow must be read here too.
const everyColumnListed: [UnlistedColumn] extends [never] ? true : never = true;
void everyColumnListed;

/**
 * The bearer check's liveness statement (session $1 called from $3) with the key of digest $2 at $4
 * beside it: a verification in one round trip (docs/performance.md, "verification"). The key's
 * columns come prefixed `key_`, so they never clash with the principal's: a lateral join, which
 * PostgreSQL runs in about four fifths of the time that building the key as one JSON value took.
 */
const FIND_WITH_LIVE_PRINCIPAL = preparedStatement(
  'verification.find-with-live-principal',
  `SELECT live.*, ${VERIFIED_KEY_COLUMNS.map((name) => `k.${name} AS key_${name}`).join(', ')}
     FROM (${livePrincipalsWhere('s.id = $1', { address: '$3::inet' })}) AS live
     LEFT JOIN LATERAL (${byDigest('$2::bytea', '$4::float8')}) AS k ON true`,
);

/** Session `sessionId`'s live principal (undefined once it is not live) and, only beside it, the key of `digest` (undefined: none). */
export async function findKeyWithLivePrincipal(
  q: Queryable,
  sessionId: string,
  address: string | null,
  digest: Buffer,
  now: number,
): Promise<{ live: LivePrincipalRow | undefined; alongside: VerifiedKeyRow | undefined }> {
  const { rows } = await q.queryPrepared<LivePrincipalRow & Prefixed<VerifiedKeyRow, 'key_'>>(FIND_WITH_LIVE_PRINCIPAL, [sessionId, digest, address, now]);
  const row = rows[0];
  if (!row) return { live: undefined, alongside: undefined };
  const { session_id, type, principal_id, name, role, scope } = row;
  const live: LivePrincipalRow = { session_id, type, principal_id, name, role, scope };
  if (row.key_id === null) return { live, alongside: undefined };
  const key: Record<string, unknown> = {};
  for (const column of VERIFIED_KEY_COLUMNS) key[column] = row[`key_${column}`];
  return { live, alongside: key as unknown as VerifiedKeyRow };
}
