import { Coalescer } from '../db/coalescer';
import type { Database } from '../db/database';
import { openApiKeySessions, type ApiKeyLogin, type ApiKeySessionOutcome } from './api-key-opening';

/**
 * API-key logins. Concurrent ones share one statement and one commit, which is most of their cost
 * (docs/performance.md, "exchange"); a lone login goes at once.
 */
export class ApiKeyLogins {
  private readonly batches: Coalescer<ApiKeyLogin, ApiKeySessionOutcome>;

  constructor(db: Database) {
    this.batches = new Coalescer((logins) => openApiKeySessions(db, logins), { maxInFlight: 1, maxBatch: 128 });
  }

  /** Records the request token's jti and opens the session; see openApiKeySessions for the outcomes. */
  open(login: ApiKeyLogin): Promise<ApiKeySessionOutcome> {
    return this.batches.submit(login);
  }
}
