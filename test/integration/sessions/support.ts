import type { RequestOrigin } from '../../../src/shared/audit-context';
import type { TestApp } from '../../helpers/app';

/** How many token.issued events the requests of these batch items recorded. */
export async function tokenIssuedEventsOf(t: TestApp, items: { origin: RequestOrigin }[]): Promise<number> {
  const { rows } = await t.db.query<{ n: string }>(
    "SELECT count(*) AS n FROM audit_events WHERE type = 'token.issued' AND request_id = ANY($1::text[])",
    [items.map((item) => item.origin.requestId)],
  );
  return Number(rows[0]!.n);
}
