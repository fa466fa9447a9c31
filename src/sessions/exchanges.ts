import { preparedStatement, type Queryable } from '../db/database';
import { auditInsertFrom } from '../audit-trail/audit-trail';
import type { RequestOrigin } from '../shared/audit-context';
import { livePrincipalsWhere, type LivePrincipalRow } from './liveness';
import { originParams, originValues, principalColumns } from './statement-parts';

/** A token exchange as its audit event records it, beside the sessions it rests on. */
export interface ExchangeRecord {
  /** The subject token's session and principal (its `sid` and `sub`). */
  sessionId: string;
  principalId: string;
  /** The actor token's, when one was sent. */
  actor?: { sessionId: string; principalId: string };
  audience: string;
  scope: string;
  clientId: string;
  origin: RequestOrigin;
}

/**
 * A token exchange's one round trip (RFC 8693): the subject token's session and principal, only
 * while all of it is live (the liveness check of every bearer call), and, when an actor token was
 * sent, only while the actor's session and principal are live too; then the event, recorded exactly
 * when the exchange goes ahead. Nothing else is written: the new token lives in the subject's session.
 */
const EXCHANGE = (() => {
  const origin = originParams(9);
  return preparedStatement(
    'sessions.exchange',
    `WITH subject AS (${livePrincipalsWhere('s.id = $1')}
     ), actor AS (${livePrincipalsWhere('s.id = $3::uuid')}
     ), granted AS (
       SELECT subject.* FROM subject
        WHERE subject.principal_id = $2::uuid
          AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM actor WHERE actor.principal_id = $4::uuid))
     ), audit AS (
       ${auditInsertFrom('granted', {
         type: 'token.exchanged',
         ...principalColumns('granted'),
         ...origin,
         details: `jsonb_build_object('route', ${origin.route}, 'session_id', granted.session_id, 'audience', $5::text, 'scope', $6::text,
                                      'client_id', $7::text, 'actor_sub', $8::text)`,
       })}
     )
     SELECT * FROM granted`,
  );
})();

/** The subject's live principal (with its session's granted scope), once the exchange is recorded; undefined when the subject or the actor is not live: nothing was written. */
export async function recordExchange(q: Queryable, e: ExchangeRecord): Promise<LivePrincipalRow | undefined> {
  const { rows } = await q.queryPrepared<LivePrincipalRow>(EXCHANGE, [
    e.sessionId,
    e.principalId,
    e.actor?.sessionId ?? null,
    e.actor?.principalId ?? null,
    e.audience,
    e.scope,
    e.clientId,
    e.actor?.principalId ?? null,
    ...originValues(e.origin),
  ]);
  return rows[0];
}
