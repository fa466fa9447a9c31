import { preparedStatement, type PreparedStatement, type Queryable } from '../db/database';
import { unnestRows, unnestValues, type UnnestColumn } from '../db/unnest';
import { auditInsertFrom } from '../audit-trail/audit-trail';
import type { Role } from '../shared/principals';
import { creditsAt } from '../key-policies/policy-sql';
import { appkeyGenerationValid } from './appkey-generations';
import type { DpopProofRecord } from '../dpop/proof-replay';
import { originColumns, originColumnsOf, scopeGrantedBy, timesOf, type SessionTimes } from './statement-parts';
import type { NewSession, SessionGrant } from './opening';

/**
 * An API key's login: by a request token (whose `jti` is recorded until `jtiExpiresAt`, so it cannot
 * be replayed), or by its appkey itself as a client secret (no token: `jti` null).
 */
export type ApiKeyLogin = NewSession &
  SessionGrant & {
    apiKeyId: string;
    keyGeneration: number;
    jti: string | null;
    jtiExpiresAt: number | null;
    /** The replay record of the request's DPoP proof (dpop/proof-replay.ts), spent by the login itself; null: no proof. */
    dpopProof: DpopProofRecord | null;
    /** The version of the key's policy the login was judged against (see key-policies/key-judge.ts). */
    policyVersion: number;
    /** That policy gives the key credits (spent by the login). */
    credits: boolean;
    /** The moment it was judged at (Unix seconds): credits are spent and last_used stamped at it. */
    policyNow: number;
  };

const LOGIN_COLUMNS: UnnestColumn<ApiKeyLogin>[] = [
  { name: 'session_id', type: 'uuid', of: (l) => l.id },
  { name: 'api_key_id', type: 'uuid', of: (l) => l.apiKeyId },
  { name: 'key_generation', type: 'int', of: (l) => l.keyGeneration },
  { name: 'policy_version', type: 'int', of: (l) => l.policyVersion },
  { name: 'policy_now', type: 'float8', of: (l) => l.policyNow },
  { name: 'refresh_jti', type: 'uuid', of: (l) => l.refreshJti },
  { name: 'jti', type: 'text', of: (l) => l.jti },
  { name: 'jti_expires_at', type: 'float8', of: (l) => l.jtiExpiresAt },
  { name: 'issued_at', type: 'bigint', of: (l) => l.now },
  { name: 'refresh_ttl', type: 'int', of: (l) => l.refreshTtlSeconds },
  { name: 'max_ttl', type: 'int', of: (l) => l.maxTtlSeconds },
  { name: 'scope', type: 'text', of: (l) => l.scope },
  { name: 'dpop_jkt', type: 'text', of: (l) => l.dpopJkt },
  { name: 'dpop_digest', type: 'bytea', of: (l) => l.dpopProof?.digest ?? null },
  { name: 'dpop_expires_at', type: 'float8', of: (l) => l.dpopProof?.expiresAt ?? null },
  ...originColumns(),
];

/**
 * The parts of the statement a batch needs. Each part costs PostgreSQL work on every statement even
 * when none of the batch's rows use it, and most batches (keys without credits, no scope asked, no
 * DPoP) use none, so each shape is a statement of its own (docs/performance.md, "exchange").
 */
interface Shape {
  /** Some login carries a DPoP proof to spend. */
  proofs: boolean;
  /** Some login asks for a scope, checked against the key's role and permissions. */
  scopes: boolean;
  /** Some login's key had credits when judged. */
  credits: boolean;
}

const shapeOf = (logins: ApiKeyLogin[]): Shape => ({
  proofs: logins.some((l) => l.dpopProof !== null),
  scopes: logins.some((l) => l.scope !== null),
  credits: logins.some((l) => l.credits),
});

/**
 * The logins of one or more API keys in one statement and one commit. Per login: its DPoP proof spent
 * (a proof presented before, or twice in the batch, opens nothing and spends nothing else), the jti
 * recorded (its primary key refuses a replay) and, for a fresh jti, a credit spent if the key has
 * credits, last login and last use stamped, session opened (never past the key's expiry) and the
 * event recorded. One row back per login. The proof is spent here rather than by a statement of its
 * own: client credentials with DPoP then cost one commit, not two (docs/token-exchange-and-dpop.md).
 *
 * The exchange may have verified with cached appkeys and judged a cached policy, so a login counts
 * only while its key is still that id, the appkey's generation is still valid, and the policy is
 * still the version judged. Those rows are locked first, in id order: a concurrent regen, delete or
 * policy change then waits for this commit rather than slipping in between the check and the writes,
 * two batches always lock in the same order, so they cannot deadlock, and credits read from the
 * locked row are exact across instances. Of a key's fresh logins in a batch, as many as its credits
 * allow (after any refill due) open a session, in the order they came; the others are refused and
 * spend nothing.
 *
 * A statement without the credits part takes a key that has credits for stale: only a policy change
 * gives a key credits, and that bumps the version, so this is a guard, never a refusal seen.
 */
function openStatementText(shape: Shape): string {
  const proofs = `
   ), proof_first AS (
     -- The same DPoP proof twice in one batch: only the first may spend it.
     SELECT DISTINCT ON (dpop_digest) ord, dpop_digest, dpop_expires_at FROM permitted WHERE dpop_digest IS NOT NULL ORDER BY dpop_digest, ord
   ), spent AS (
     -- As dpop/proof-replay.ts spends a proof: any record of it refuses it, until pruning forgets a proof too old to pass.
     INSERT INTO dpop_proof_jtis (digest, expires_at)
     SELECT dpop_digest, to_timestamp(dpop_expires_at) FROM proof_first
     ON CONFLICT (digest) DO NOTHING
     RETURNING digest
   ), proven AS (
     SELECT permitted.* FROM permitted
      WHERE permitted.dpop_digest IS NULL
         OR permitted.ord IN (SELECT proof_first.ord FROM proof_first JOIN spent ON spent.digest = proof_first.dpop_digest)`;
  const credits = `
   ), credit AS (
     -- Each key's credits at its batch's latest moment (a refill due by then applied); NULL: no credits.
     SELECT locked.id, at.policy_now, ${creditsAt('locked', 'to_timestamp(at.policy_now)')} AS available
       FROM locked JOIN (SELECT api_key_id, max(policy_now) AS policy_now FROM unreplayed GROUP BY api_key_id) AS at ON at.api_key_id = locked.id
   ), fresh AS (
     SELECT counted.* FROM (
       SELECT unreplayed.*, credit.available, row_number() OVER (PARTITION BY unreplayed.api_key_id ORDER BY unreplayed.ord) AS nth
         FROM unreplayed JOIN credit ON credit.id = unreplayed.api_key_id
     ) AS counted
      WHERE counted.available IS NULL OR counted.nth <= counted.available
   ), login AS (
     UPDATE api_keys
        SET last_login = latest.issued_at, last_ip = latest.client_address,
            last_used = GREATEST(api_keys.last_used, to_timestamp(credit.policy_now)),
            credits_remaining = COALESCE(credit.available - latest.spent, api_keys.credits_remaining),
            credits_updated_at = CASE WHEN credit.available IS NULL THEN api_keys.credits_updated_at
                                      ELSE GREATEST(api_keys.credits_updated_at, to_timestamp(credit.policy_now)) END
       FROM (SELECT DISTINCT ON (api_key_id) api_key_id, issued_at, client_address, count(*) OVER (PARTITION BY api_key_id) AS spent
               FROM fresh ORDER BY api_key_id, ord DESC) AS latest
       JOIN credit ON credit.id = latest.api_key_id
      WHERE api_keys.id = latest.api_key_id`;
  const noCredits = `
   ), fresh AS (
     SELECT * FROM unreplayed
   ), login AS (
     UPDATE api_keys
        SET last_login = latest.issued_at, last_ip = latest.client_address,
            last_used = GREATEST(api_keys.last_used, to_timestamp(latest.policy_now))
       FROM (SELECT DISTINCT ON (api_key_id) api_key_id, issued_at, client_address, max(policy_now) OVER (PARTITION BY api_key_id) AS policy_now
               FROM fresh ORDER BY api_key_id, ord DESC) AS latest
      WHERE api_keys.id = latest.api_key_id`;
  return `WITH req AS (
     ${unnestRows(LOGIN_COLUMNS)}
   ), locked AS (
     SELECT id, appname, role, key_generation, previous_key_valid_until, policy_version, expires_at, permissions,
            ${shape.credits ? 'credits_remaining, credits_refill_amount, credits_refill_interval, credits_updated_at' : 'credits_remaining IS NULL AS no_credits'}
       FROM api_keys WHERE id IN (SELECT api_key_id FROM req)
      ORDER BY id FOR NO KEY UPDATE
   ), valid AS (
     SELECT req.*, locked.appname, locked.role, locked.expires_at AS key_expires_at,
            ${shape.scopes ? scopeGrantedBy('req.scope', 'locked.role', 'locked.permissions') : 'true'} AS scope_granted
       FROM req JOIN locked ON locked.id = req.api_key_id
      WHERE ${appkeyGenerationValid('req.key_generation', 'locked')} AND locked.policy_version = req.policy_version
            ${shape.credits ? '' : 'AND locked.no_credits'}
   ), permitted AS (
     -- A scope the key's role and permissions do not grant now opens nothing and spends nothing (not even the jti).
     SELECT * FROM valid WHERE scope_granted${shape.proofs ? proofs : `
   ), proven AS (
     SELECT * FROM permitted`}
   ), recorded AS (
     INSERT INTO request_token_jtis (api_key_id, jti, expires_at)
     SELECT api_key_id, jti, to_timestamp(jti_expires_at) FROM proven WHERE jti IS NOT NULL
     ON CONFLICT DO NOTHING
     RETURNING api_key_id, jti
   ), unreplayed AS (
     -- The same token twice in one batch: the first gets the session, the second is a replay.
     -- A login without a token (jti NULL) is never a replay, and each is a login of its own.
     SELECT DISTINCT ON (proven.api_key_id, proven.jti, CASE WHEN proven.jti IS NULL THEN proven.ord END) proven.*
       FROM proven LEFT JOIN recorded ON recorded.api_key_id = proven.api_key_id AND recorded.jti = proven.jti
      WHERE proven.jti IS NULL OR recorded.jti IS NOT NULL
      ORDER BY proven.api_key_id, proven.jti, CASE WHEN proven.jti IS NULL THEN proven.ord END, proven.ord${shape.credits ? credits : noCredits}
   ), opened AS (
     INSERT INTO sessions (id, api_key_id, key_generation, refresh_jti, created_at, expires_at, refresh_expires_at, scope, dpop_jkt)
     SELECT session_id, api_key_id, key_generation, refresh_jti, to_timestamp(issued_at),
            LEAST(to_timestamp(issued_at + max_ttl), key_expires_at),
            LEAST(to_timestamp(issued_at + LEAST(refresh_ttl, max_ttl)), key_expires_at), scope, dpop_jkt
       FROM fresh
     RETURNING id, ${timesOf('sessions')}
   ), audit AS (
     ${auditInsertFrom('(SELECT * FROM fresh ORDER BY ord) AS fresh', {
       type: 'token.issued',
       actor: "'api_key:' || fresh.appname",
       appname: 'fresh.appname',
       ...originColumnsOf('fresh'),
       details: "jsonb_build_object('route', fresh.route, 'session_id', fresh.session_id)",
     })}
   )
   SELECT valid.ord IS NOT NULL AS key_valid, valid.scope_granted, proven.ord IS NOT NULL AS proof_fresh,
          unreplayed.ord IS NOT NULL AS unreplayed, valid.role,
          extract(epoch FROM valid.key_expires_at)::float8 AS not_after, opened.refresh_expires_at, opened.created_at
     FROM req
     LEFT JOIN valid USING (ord)
     LEFT JOIN proven USING (ord)
     LEFT JOIN unreplayed USING (ord)
     LEFT JOIN opened ON opened.id = req.session_id
    ORDER BY req.ord`;
}

const OPEN_API_KEY_SESSIONS = new Map<string, PreparedStatement>();

function openStatement(shape: Shape): PreparedStatement {
  const name = `sessions.open-api-key-sessions${shape.proofs ? '.proofs' : ''}${shape.scopes ? '.scopes' : ''}${shape.credits ? '.credits' : ''}`;
  let statement = OPEN_API_KEY_SESSIONS.get(name);
  if (!statement) OPEN_API_KEY_SESSIONS.set(name, (statement = preparedStatement(name, openStatementText(shape))));
  return statement;
}

export type ApiKeySessionOutcome =
  /** `notAfter`: the key's expiry (Unix seconds), which no token of the session outlives; null: none. */
  | { opened: true; role: Role | null; times: SessionTimes; notAfter: number | null }
  /**
   * Nothing opened. `stale`: the key is gone, the appkey's generation is no longer valid, or the
   * policy changed since it was judged, and nothing was written; `scope`: the key's role and
   * permissions do not grant the scope asked for, and nothing was written; `proof_replayed`: the DPoP
   * proof was presented before, and nothing else was written; `replayed`: the jti was used before;
   * `usage_exceeded`: the key's credits are spent (its jti is recorded all the same: the token was used).
   */
  | { opened: false; refused: 'stale' | 'scope' | 'proof_replayed' | 'replayed' | 'usage_exceeded' };

/** The logins of API keys, all in one statement (one round trip, one commit); one outcome per login, in order. */
export async function openApiKeySessions(q: Queryable, logins: ApiKeyLogin[]): Promise<ApiKeySessionOutcome[]> {
  type Row = { key_valid: boolean; scope_granted: boolean | null; proof_fresh: boolean; unreplayed: boolean; role: Role | null; not_after: number | null } & {
    [K in keyof SessionTimes]: SessionTimes[K] | null;
  };
  const { rows } = await q.queryPrepared<Row>(openStatement(shapeOf(logins)), unnestValues(LOGIN_COLUMNS, logins));
  return rows.map(({ key_valid, scope_granted, proof_fresh, unreplayed, role, not_after, refresh_expires_at, created_at }): ApiKeySessionOutcome => {
    if (refresh_expires_at !== null && created_at !== null) return { opened: true, role, times: { refresh_expires_at, created_at }, notAfter: not_after };
    if (!key_valid) return { opened: false, refused: 'stale' };
    if (!scope_granted) return { opened: false, refused: 'scope' };
    if (!proof_fresh) return { opened: false, refused: 'proof_replayed' };
    return { opened: false, refused: unreplayed ? 'usage_exceeded' : 'replayed' };
  });
}
