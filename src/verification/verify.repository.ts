import { preparedStatement, type Queryable } from '../db/database';
import type { Prefixed } from '../db/prefixed-columns';
import { unnestRows, unnestValues, type UnnestColumn } from '../db/unnest';
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

/** One verification's read: the bearer's session `sessionId` called from `address` (null: unknown), and the key of `digest` at `now` (Unix seconds). */
export interface KeyLookup {
  sessionId: string;
  address: string | null;
  digest: Buffer;
  now: number;
}

const LOOKUP_COLUMNS: UnnestColumn<KeyLookup>[] = [
  { name: 'session_id', type: 'uuid', of: (l) => l.sessionId },
  { name: 'address', type: 'inet', of: (l) => l.address },
  { name: 'digest', type: 'bytea', of: (l) => l.digest },
  { name: 'now', type: 'float8', of: (l) => l.now },
];

/**
 * The bearer check's liveness statement with the key of each lookup's digest beside it, for a batch
 * of verifications: one round trip and one statement for all of them (docs/performance.md,
 * "verification"). The key's columns come prefixed `key_`, so they never clash with the principal's,
 * and only beside a live principal; a lookup whose session is not live comes back with no principal.
 */
const FIND_WITH_LIVE_PRINCIPALS = preparedStatement(
  'verification.find-with-live-principals',
  `SELECT live.*, ${VERIFIED_KEY_COLUMNS.map((name) => `k.${name} AS key_${name}`).join(', ')}
     FROM (${unnestRows(LOOKUP_COLUMNS)}) AS batch
     LEFT JOIN LATERAL (${livePrincipalsWhere('s.id = batch.session_id', { address: 'batch.address' })}) AS live ON true
     LEFT JOIN LATERAL (${byDigest('batch.digest', 'batch.now')}) AS k ON live.session_id IS NOT NULL
    ORDER BY batch.ord`,
);

export interface LookedUp {
  /** The session's live principal; undefined once it is not live. */
  live: LivePrincipalRow | undefined;
  /** The key of the digest, only beside a live principal (undefined: none). */
  alongside: VerifiedKeyRow | undefined;
}

/** Each lookup's live principal and key, in the lookups' order. */
export async function findKeysWithLivePrincipals(q: Queryable, lookups: KeyLookup[]): Promise<LookedUp[]> {
  type Row = { [K in keyof LivePrincipalRow]: LivePrincipalRow[K] | null } & Prefixed<VerifiedKeyRow, 'key_'>;
  const { rows } = await q.queryPrepared<Row>(FIND_WITH_LIVE_PRINCIPALS, unnestValues(LOOKUP_COLUMNS, lookups));
  return rows.map((row) => {
    const { session_id, type, principal_id, name, role, scope } = row;
    if (session_id === null) return { live: undefined, alongside: undefined };
    const live = { session_id, type, principal_id, name, role, scope } as LivePrincipalRow;
    if (row.key_id === null) return { live, alongside: undefined };
    const key: Record<string, unknown> = {};
    for (const column of VERIFIED_KEY_COLUMNS) key[column] = row[`key_${column}`];
    return { live, alongside: key as unknown as VerifiedKeyRow };
  });
}
