import type { Database } from '../db/database';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { capSessionsOfApiKey } from '../sessions/revocation';
import { forbidden, notFound } from '../shared/errors';
import { allows, type Principal } from '../shared/principals';
import { contextOf, type RequestOrigin } from '../shared/audit-context';
import type { Clock } from '../key-policies/policy';
import { changedPolicy, putExpiryOf } from '../key-policies/policy-rules';
import { findPolicyRecord, lockPolicyRecord, writePolicy } from '../key-policies/policy.repository';
import { presentPolicy } from '../key-policies/policy.presenter';
import type { KeyPolicyRecord } from '../key-policies/policy.responses';
import type { PutPolicyInput } from '../key-policies/policy.schemas';
import { recordKeysDisabled } from './key-switches';
import type { ValidAppkeys } from './valid-appkeys';

/** What policies are written under: the policies' clock and KEY_MAX_LIFETIME_DAYS. */
export interface PolicySettings {
  clock: Clock;
  maxLifetimeDays: number | undefined;
}

/**
 * GET and PUT /api/v1/api-keys/{appname}/policy, by the key operations' role table: whoever may get
 * the key may read its policy, whoever may update it may replace it. Knows nothing of HTTP.
 */
export class KeyPolicyService {
  constructor(
    private readonly db: Database,
    private readonly appkeys: ValidAppkeys,
    private readonly settings: PolicySettings,
  ) {}

  /** Authorisation (403) before existence (404). */
  async get(principal: Principal, appname: string): Promise<KeyPolicyRecord> {
    if (!allows.read(principal)) throw forbidden();
    const row = await findPolicyRecord(this.db, appname, this.settings.clock());
    if (!row) throw notFound(`API key "${appname}" not found`);
    return presentPolicy(row);
  }

  /**
   * Replaces the policy. A key turned off ends its sessions (`api_key.disabled`, reason manual); a key
   * turned on again is on from now (`api_key.enabled`); an earlier expiry brings its sessions' ends
   * forward; any change is `api_key.policy_changed`, with each changed field before and after.
   */
  async put(principal: Principal, appname: string, input: PutPolicyInput, origin: RequestOrigin): Promise<KeyPolicyRecord> {
    const now = this.settings.clock();
    const rules = { now, maxLifetimeDays: this.settings.maxLifetimeDays, at: 'body' };
    // The expiry needs no stored policy, so it is checked first (400 before 403 and 404); the read-only
    // fields are compared with the stored ones, so they can only be checked once the key is found.
    putExpiryOf(input, rules);
    if (!allows.write(principal)) throw forbidden();
    const ctx = contextOf(principal, origin);
    const stored = await this.db.withTransaction(async (tx) => {
      const current = await lockPolicyRecord(tx, appname, now);
      if (!current) throw notFound(`API key "${appname}" not found`);
      if (!allows.manageKeyWithRole(principal, current.role)) throw forbidden();
      const change = changedPolicy(input, presentPolicy(current), rules);
      if (Object.keys(change.changes).length === 0) return current;
      await writePolicy(tx, current.id, change.write, now);
      if (change.switched === 'off') await recordKeysDisabled(tx, ctx, [current], 'manual');
      if (change.switched === 'on') await recordAuditEvent(tx, ctx, { type: 'api_key.enabled', appname, details: { reason: 'manual' } });
      if (change.write.expiresAt !== null) await capSessionsOfApiKey(tx, current.id, change.write.expiresAt);
      await recordAuditEvent(tx, ctx, { type: 'api_key.policy_changed', appname, details: { changes: change.changes } });
      return (await findPolicyRecord(tx, appname, now))!;
    });
    // Not needed for correctness (a kept copy is confirmed by its write's version), but spares this instance's next login a miss.
    this.appkeys.forget(appname);
    return presentPolicy(stored);
  }
}
