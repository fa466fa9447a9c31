import type { Database } from '../db/database';
import { sha256 } from '../crypto/digest';
import { disableKey } from '../key-policies/policy.repository';
import { recordKeysDisabled } from '../api-keys/key-switches';
import type { RequestOrigin } from '../shared/audit-context';
import type { Clock } from '../key-policies/policy';
import { lockKeysByDigests } from './leaked-keys.repository';

/**
 * POST /api/v1/keys/revoke: whoever holds a key may turn it off, as RFC 7009 lets whoever holds a
 * token revoke it. The key is found by the SHA-256 of what was presented (its current key, or the
 * previous one within a regen's grace, as the token routes accept it), so an imported key is found as
 * well. The same lookup runs for an unknown string, and the caller answers the same either way; only
 * the time differs (a live key is also written and audited), and a probe that sees it has turned the key off.
 */
export class SelfRevocation {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  async revoke(presented: string, origin: RequestOrigin): Promise<void> {
    const digest = sha256(presented);
    await this.db.withTransaction(async (tx) => {
      const [key] = await lockKeysByDigests(tx, [digest], this.clock());
      // Unknown, or already off (it keeps the reason it was turned off for): nothing to do. An expired
      // key is turned off too, so that a later expires_at does not bring a key its holder gave up back.
      if (!key?.enabled) return;
      const switched = await disableKey(tx, key.id, 'holder');
      if (switched) await recordKeysDisabled(tx, { ...origin, actor: `api_key:${key.appname}` }, [switched], 'holder');
    });
  }
}
