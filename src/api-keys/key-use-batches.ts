import { Coalescer } from '../db/coalescer';
import type { Queryable } from '../db/database';
import { spendKeyUses, type KeyUse, type KeyUseOutcome } from './key-uses';

/**
 * Uses of keys that open no session (verification, client authentication). Concurrent ones share one
 * statement and one commit, which is most of their cost, as API-key logins do (ApiKeyLogins); a lone
 * use goes at once. One instance serves every caller, so their uses batch together.
 */
export class KeyUses {
  private readonly batches: Coalescer<KeyUse, KeyUseOutcome>;

  constructor(db: Queryable) {
    this.batches = new Coalescer((uses) => spendKeyUses(db, uses), { maxInFlight: 1, maxBatch: 128 });
  }

  /** Stamps last_used and spends the use's cost if it still holds; see spendKeyUses for the outcomes. */
  spend(use: KeyUse): Promise<KeyUseOutcome> {
    return this.batches.submit(use);
  }
}
