import { randomUUID } from 'node:crypto';
import { recordExchanges, type ExchangeRecord } from '../../../src/sessions/exchanges';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';

/**
 * The statement that records a batch of token exchanges, on the real database. Over HTTP, which
 * exchanges share a batch depends on timing; here the batch is chosen, so what one exchange in a
 * batch must not do to another is pinned down.
 */
describe('recordExchanges (token exchanges, many in one statement)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function liveToken(role: 'viewer' | 'editor' = 'viewer') {
    const claims = claimsOf((await loginAs(t, await createUser(t, { role }))).access_token) as { sid: string; sub: string };
    return { sessionId: claims.sid, principalId: claims.sub };
  }
  const exchangeOf = (subject: { sessionId: string; principalId: string }, actor?: { sessionId: string; principalId: string }): ExchangeRecord => ({
    ...subject,
    ...(actor && { actor }),
    audience: 'http://issuer.test',
    scope: 'api-keys:read',
    clientId: 'public',
    address: '192.0.2.9',
    origin: { clientAddress: '192.0.2.9', requestId: randomUUID(), route: '/oauth2/token' },
  });
  const eventsOf = async (exchanges: ExchangeRecord[]) =>
    Number(
      (await t.db.query<{ n: string }>("SELECT count(*) AS n FROM audit_events WHERE type = 'token.exchanged' AND request_id = ANY($1::text[])", [exchanges.map((e) => e.origin.requestId)]))
        .rows[0]!.n,
    );

  it('when a batch mixes live subjects, a revoked one, a wrong principal and a dead actor, then only the live ones are answered and recorded, in order', async () => {
    const [alive, editor, revoked, actor, deadActor] = await Promise.all([liveToken(), liveToken('editor'), liveToken(), liveToken(), liveToken()]);
    await t.db.query('UPDATE sessions SET revoked_at = now() WHERE id = ANY($1::uuid[])', [[revoked.sessionId, deadActor.sessionId]]);
    const batch = [
      exchangeOf(alive),
      exchangeOf(revoked),
      exchangeOf({ sessionId: editor.sessionId, principalId: alive.principalId }),
      exchangeOf(editor, actor),
      exchangeOf(alive, deadActor),
    ];

    const outcomes = await recordExchanges(t.db, batch);

    expect(outcomes.map((o) => o && [o.session_id, o.role])).toEqual([[alive.sessionId, 'viewer'], undefined, undefined, [editor.sessionId, 'editor'], undefined]);
    expect(await eventsOf([batch[0]!, batch[3]!])).toBe(2);
    expect(await eventsOf([batch[1]!, batch[2]!, batch[4]!])).toBe(0);
  });
});
