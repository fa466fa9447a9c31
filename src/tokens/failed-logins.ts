import type { Queryable } from '../db/database';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { LoginRefusedError } from '../shared/errors';
import type { RequestOrigin } from '../shared/audit-context';

/** Whom a refused login named: the appname a request token claimed, or the username given. */
export type LoginClaimant = { appname: string | null } | { username: string };

/**
 * Runs a login. A refusal leaves a `login.failed` event even though nothing changed, with its reason
 * (unknown user, wrong password...) for operators only, then goes on to the caller as it was.
 */
export async function recordingRefusals<T>(db: Queryable, origin: RequestOrigin, claimant: () => LoginClaimant, login: () => Promise<T>): Promise<T> {
  try {
    return await login();
  } catch (err) {
    if (err instanceof LoginRefusedError) {
      await recordAuditEvent(db, { ...origin, actor: 'anonymous' }, { type: 'login.failed', ...claimant(), details: { route: origin.route, reason: err.reason } });
    }
    throw err;
  }
}
