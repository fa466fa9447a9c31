import type { Database } from '../db/database';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { clientAddress, type ClientAddress } from '../key-policies/addresses';
import { creditsRetryAfter, type KeyJudge, type KeyUse } from '../key-policies/key-judge';
import { disableIdleKey, recordExpiredApiKeys } from '../api-keys/key-switches';
import type { KeyAppkeys } from '../api-keys/valid-appkeys';
import { KeyRefusedError, KeyThrottledError } from '../shared/errors';
import type { KeyRefusal } from '../shared/key-refusals';
import type { RequestOrigin } from '../shared/audit-context';
import { UNCOUNTED, type KeyUsageCounts } from '../usage/usage-counter';

/**
 * One authentication of an API key, from one request, on any path a key authenticates by: the key
 * route, the token endpoint's grants and client authentication, revocation and introspection. It
 * judges the key whose secret or signature checked out (KeyJudge: its use counts once against the
 * rate limit however often the key is read), tells refusals in the contract's words, and writes each
 * down as `token.refused`. Credits are spent by the caller's write, which reports a shortfall here.
 */
export class KeyAuthentication {
  private readonly use: KeyUse;
  /** The caller's address, parsed at the first key that lists addresses (most list none). */
  private parsedAddress: { value: ClientAddress | undefined } | undefined;

  constructor(
    private readonly db: Database,
    judge: KeyJudge,
    private readonly origin: RequestOrigin,
    private readonly usage: KeyUsageCounts,
  ) {
    this.use = judge.use();
  }

  private addressFor(key: KeyAppkeys): ClientAddress | undefined {
    if (key.policy.addresses.anywhere) return undefined;
    this.parsedAddress ??= { value: clientAddress(this.origin.clientAddress) };
    return this.parsedAddress.value;
  }

  /** The moment the authentication is judged at (Unix seconds): the caller's write stamps and spends at it too. */
  get now(): number {
    return this.use.now;
  }

  /**
   * Judges `key` (its secret or signature checked out) up to its credits: true when admitted, false
   * when a kept copy of its policy refused it (read the key afresh and judge again: the copy may be
   * stale). A refusal by a fresh read is written down and thrown; a key found idle is turned off
   * first, and a key found expired has its expiry recorded.
   */
  async admit(key: KeyAppkeys): Promise<boolean> {
    let verdict = await this.use.judge(key.id, key.policy, this.addressFor(key));
    if (verdict.admitted) return true;
    if (!key.fresh) return false;
    if (verdict.reason === 'idle') {
      const off = await this.db.withTransaction((tx) => disableIdleKey(tx, { ...this.origin, actor: 'system' }, key.id, this.now));
      // Not off: another instance used it since it was read, so it is not idle; the other checks still hold.
      verdict = off ? { admitted: false, reason: 'disabled', rate: verdict.rate } : await this.use.judge(key.id, { ...key.policy, idle: null }, this.addressFor(key));
      if (verdict.admitted) return true;
    }
    if (verdict.reason === 'expired' && !key.policy.expiryRecorded) {
      await this.db.withTransaction((tx) => recordExpiredApiKeys(tx, { ...this.origin, actor: 'system' }, 1, this.now, key.id));
    }
    return this.refuse(key, verdict.reason === 'idle' ? 'disabled' : verdict.reason, verdict.retryAfter);
  }

  /** The caller's write found the key's credits spent (judged by the locked row: no fresh read needed). */
  refuseUsage(key: KeyAppkeys): Promise<never> {
    return this.refuse(key, 'usage_exceeded', creditsRetryAfter(key.policy, this.now));
  }

  private async refuse(key: KeyAppkeys, reason: KeyRefusal, retryAfter: number | undefined): Promise<never> {
    this.usage.refusal(key.id, reason);
    await recordAuditEvent(
      this.db,
      { ...this.origin, actor: `api_key:${key.appname}` },
      { type: 'token.refused', appname: key.appname, details: { route: this.origin.route, reason } },
    );
    if ((reason === 'rate_limited' || reason === 'usage_exceeded') && retryAfter !== undefined) throw new KeyThrottledError(reason, retryAfter);
    throw new KeyRefusedError(reason);
  }
}

/** Starts the authentications of keys: one per request, see KeyAuthentication. */
export class KeyAdmissions {
  constructor(
    private readonly db: Database,
    private readonly judge: KeyJudge,
    /** Where refusals are counted by reason (usage), besides their audit event. */
    private readonly usage: KeyUsageCounts = UNCOUNTED,
  ) {}

  begin(origin: RequestOrigin): KeyAuthentication {
    return new KeyAuthentication(this.db, this.judge, origin, this.usage);
  }
}
