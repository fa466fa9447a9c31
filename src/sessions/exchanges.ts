import { Coalescer } from '../db/coalescer';
import { preparedStatement, type Database, type Queryable } from '../db/database';
import { unnestRows, unnestValues, type UnnestColumn } from '../db/unnest';
import { auditInsertFrom } from '../audit-trail/audit-trail';
import type { RequestOrigin } from '../shared/audit-context';
import { addressAllowed } from '../key-policies/policy-sql';
import { livePrincipalsWhere, type LiveKeyPolicy, type LivePrincipalRow } from './liveness';
import { originColumns, originColumnsOf, principalColumns } from './statement-parts';

/** A token exchange as its audit event records it, beside the sessions it rests on. */
export interface ExchangeRecord {
  /** The subject token's session and principal (its `sid` and `sub`). */
  sessionId: string;
  principalId: string;
  /** The actor token's, when one was sent. */
  actor?: { sessionId: string; principalId: string };
  audience: string;
  /** The scope asked for, within the subject token's. */
  scope: string;
  clientId: string;
  /** The caller's address as clientAddressText gives it (null: unknown): a key subject's policy must allow it. */
  address: string | null;
  origin: RequestOrigin;
}

/** The subject's live principal, with what its key's policy says of its tokens ([] and null for a user). */
export type ExchangedPrincipal = LivePrincipalRow & Pick<LiveKeyPolicy, 'permissions' | 'not_after'>;

const EXCHANGE_COLUMNS: UnnestColumn<ExchangeRecord>[] = [
  { name: 'session_id', type: 'uuid', of: (e) => e.sessionId },
  { name: 'principal_id', type: 'uuid', of: (e) => e.principalId },
  { name: 'actor_session_id', type: 'uuid', of: (e) => e.actor?.sessionId ?? null },
  { name: 'actor_principal_id', type: 'uuid', of: (e) => e.actor?.principalId ?? null },
  { name: 'audience', type: 'text', of: (e) => e.audience },
  { name: 'asked_scope', type: 'text', of: (e) => e.scope },
  { name: 'client_id', type: 'text', of: (e) => e.clientId },
  { name: 'address', type: 'inet', of: (e) => e.address },
  ...originColumns(),
];

/**
 * The token exchanges of a batch (RFC 8693), in one statement and one commit: for each, the subject
 * token's session and principal, only while all of it is live (the liveness check of every bearer
 * call), and, when an actor token was sent, only while the actor's session and principal are live
 * too, and the policies of a key subject and of a key actor allow the caller's address; then the event, recorded exactly
 * when the exchange goes ahead. Nothing else is written: the
 * new token lives in the subject's session. One row back per exchange, its principal or nulls.
 */
const EXCHANGE = preparedStatement(
  'sessions.exchange',
  `WITH req AS (
     ${unnestRows(EXCHANGE_COLUMNS)}
   ), subject AS (${livePrincipalsWhere('s.id IN (SELECT session_id FROM req)', { keyPolicy: true })}
   ), actor AS (${livePrincipalsWhere('s.id IN (SELECT actor_session_id FROM req WHERE actor_session_id IS NOT NULL)', { keyPolicy: true })}
   ), granted AS (
     SELECT req.*, subject.type, subject.name, subject.role, subject.scope, subject.permissions, subject.not_after
       FROM req JOIN subject ON subject.session_id = req.session_id AND subject.principal_id = req.principal_id
      WHERE ${addressAllowed('subject.networks', 'req.address')}
        AND (req.actor_session_id IS NULL
         OR EXISTS (SELECT 1 FROM actor WHERE actor.session_id = req.actor_session_id AND actor.principal_id = req.actor_principal_id
                       AND ${addressAllowed('actor.networks', 'req.address')}))
   ), audit AS (
     ${auditInsertFrom('(SELECT * FROM granted ORDER BY ord) AS granted', {
       type: 'token.exchanged',
       ...principalColumns('granted'),
       ...originColumnsOf('granted'),
       details: `jsonb_build_object('route', granted.route, 'session_id', granted.session_id, 'audience', granted.audience, 'scope', granted.asked_scope,
                                    'client_id', granted.client_id, 'actor_sub', granted.actor_principal_id)`,
     })}
   )
   SELECT granted.session_id, granted.type, granted.principal_id, granted.name, granted.role, granted.scope, granted.permissions, granted.not_after
     FROM req LEFT JOIN granted USING (ord)
    ORDER BY req.ord`,
);

/** One answer per exchange, in order: the subject's live principal (with its session's granted scope), or undefined when the subject or the actor is not live (nothing of it was written). */
export async function recordExchanges(q: Queryable, exchanges: ExchangeRecord[]): Promise<(ExchangedPrincipal | undefined)[]> {
  const { rows } = await q.queryPrepared<{ [K in keyof ExchangedPrincipal]: ExchangedPrincipal[K] | null }>(EXCHANGE, unnestValues(EXCHANGE_COLUMNS, exchanges));
  return rows.map((row) => (row.session_id === null ? undefined : (row as ExchangedPrincipal)));
}

/**
 * Token exchanges. Concurrent ones share one statement and one commit, as logins and refreshes do
 * (db/coalescer.ts): a lone exchange goes at once; under load its one write, the audit event, costs a
 * share of a commit (docs/token-exchange-and-dpop.md, "Speed").
 */
export class Exchanges {
  private readonly batches: Coalescer<ExchangeRecord, ExchangedPrincipal | undefined>;

  constructor(db: Database) {
    this.batches = new Coalescer((exchanges) => recordExchanges(db, exchanges), { maxInFlight: 1, maxBatch: 128 });
  }

  /** The subject's live principal once the exchange is recorded; undefined when the subject or the actor is not live. */
  record(exchange: ExchangeRecord): Promise<ExchangedPrincipal | undefined> {
    return this.batches.submit(exchange);
  }
}
