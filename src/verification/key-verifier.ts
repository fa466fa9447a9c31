import type { Database } from '../db/database';
import { sha256 } from '../crypto/digest';
import { forbidden } from '../shared/errors';
import { allows, scopesOf, type Principal } from '../shared/principals';
import { SYSTEM_CONTEXT } from '../shared/audit-context';
import type { VerifyCode } from '../shared/verify-codes';
import { clientAddress } from '../key-policies/addresses';
import { policyOf } from '../key-policies/policy-sql';
import type { KeyJudge, KeyUse, RateState, Verdict } from '../key-policies/key-judge';
import type { KeyUsageCounts } from '../usage/usage-counter';
import { APPKEY_PREFIX, isWellFormedAppkey } from '../api-keys/appkey';
import type { KeyUses } from '../api-keys/key-use-batches';
import { disableIdleKey, recordExpiredApiKeys } from '../api-keys/key-switches';
import { findKeyByDigest, type VerifiedKeyRow } from './verify.repository';
import type { ImportedKeyPresence } from './imported-key-presence';
import type { VerifyKeyInput } from './verify.schemas';
import type { VerifyKeyResult } from './verify.responses';
import type { KeyReadAlong } from './verify-read-along';

const STANDING_CODES = { disabled: 'DISABLED', idle: 'DISABLED', expired: 'EXPIRED', address_not_allowed: 'ADDRESS_NOT_ALLOWED' } as const;
/** A key whose policy keeps changing under the spend is read again at most this often before the call fails. */
const MAX_READS = 5;

/**
 * POST /api/v1/keys/verify: is this key good, and may it do this? The key is found by the digest of
 * what was presented and judged by the policies' own judge (KeyJudge: the same rate counters as the
 * token routes); only VALID spends credits, as client authentication does (KeyUses: concurrent uses
 * share one statement and one commit).
 * A key without credits costs one SELECT and no write: its `last_used` and the usage counts are
 * written in batches (UsageRecorder). Not audited as events: counted in usage. Knows nothing of HTTP.
 */
export class KeyVerifier {
  constructor(
    private readonly db: Database,
    private readonly judge: KeyJudge,
    private readonly usage: KeyUsageCounts,
    private readonly imported: ImportedKeyPresence,
    private readonly uses: KeyUses,
  ) {}

  /**
   * Whether `key` must be looked up: a string of our prefix with a wrong checksum is no key we made
   * and is answered NOT_FOUND without a database read, unless an imported key may look like one.
   */
  looksUp(key: string): boolean {
    return !(key.startsWith(APPKEY_PREFIX) && !isWellFormedAppkey(key) && !this.imported.mayHoldImportedKeys());
  }

  /** The moment a verification starting now is judged at (the policies' clock). */
  now(): number {
    return this.judge.clock();
  }

  /**
   * `alongside`: the key as the bearer check's statement read it (VerifyReadAlong), used for the first
   * read when it is of this key; its value passed looksUp and was hashed then, so neither is done again.
   */
  async verify(principal: Principal, input: VerifyKeyInput, alongside?: KeyReadAlong): Promise<VerifyKeyResult> {
    if (!allows.read(principal)) throw forbidden();
    let readAlong = alongside?.presented === input.key ? alongside : undefined;
    if (!readAlong && !this.looksUp(input.key)) return notFound();
    const digest = readAlong?.digest ?? sha256(input.key);
    const use = this.judge.use();
    for (let read = 1; ; read++) {
      const key = readAlong ? readAlong.key : await findKeyByDigest(this.db, digest, use.now);
      readAlong = undefined;
      if (!key) return notFound();
      const answer = await this.judged(key, input, use);
      if (answer) {
        this.usage.verification(key.id, answer.code);
        return answer;
      }
      if (read >= MAX_READS) throw new Error('the key changed under every attempt to verify it');
    }
  }

  /** The answer for `key` as read; undefined when its spend found it changed since (read it again). */
  private async judged(key: VerifiedKeyRow, input: VerifyKeyInput, use: KeyUse): Promise<VerifyKeyResult | undefined> {
    const policy = policyOf(key);
    const address = input.address === undefined ? false : clientAddress(input.address);
    let verdict = await use.judge(key.id, policy, address);
    if (!verdict.admitted && verdict.reason === 'idle') verdict = await this.turnedOffIdle(key, verdict, use, address);
    if (!verdict.admitted && verdict.reason === 'expired' && !policy.expiryRecorded) {
      await this.db.withTransaction((tx) => recordExpiredApiKeys(tx, SYSTEM_CONTEXT, 1, use.now, key.id));
    }
    const rate = verdict.rate;
    const answer = (code: VerifyCode, credits: number | null, lastUsed = this.lastUsedOf(key)) => resultOf(key, code, credits, rate, lastUsed);
    if (!verdict.admitted && verdict.reason !== 'rate_limited') return answer(STANDING_CODES[verdict.reason], key.credits);
    if (input.permissions && !mayDo(key, input.permissions)) return answer('INSUFFICIENT_PERMISSIONS', key.credits);
    if (!verdict.admitted) return answer('RATE_LIMITED', key.credits);
    const now = Math.floor(use.now);
    if (key.credits === null) {
      // No credits, no write: last_used goes with the next batch.
      this.usage.used(key.id, use.now);
      return answer('VALID', null, now);
    }
    // A cost above what is left spends nothing; at 0 the key is refused even to a check that costs 0.
    if (key.credits < Math.max(input.cost, 1)) return answer('USAGE_EXCEEDED', key.credits);
    const spent = await this.uses.spend({ keyId: key.id, version: key.policy_version, generation: key.generation, cost: input.cost, now: use.now });
    if (spent.used) return answer('VALID', spent.remaining, now);
    if (spent.stale) return undefined;
    return answer('USAGE_EXCEEDED', spent.available);
  }

  /** A key found idle is turned off (as a login does), unless another instance used it since it was read. */
  private async turnedOffIdle(key: VerifiedKeyRow, verdict: Verdict, use: KeyUse, address: ReturnType<typeof clientAddress> | false): Promise<Verdict> {
    const off = await this.db.withTransaction((tx) => disableIdleKey(tx, SYSTEM_CONTEXT, key.id, use.now));
    return off ? { admitted: false, reason: 'disabled', rate: verdict.rate } : use.judge(key.id, { ...policyOf(key), idle: null }, address);
  }

  /** The latest use known here: the database's, or one this instance has not written yet. */
  private lastUsedOf(key: VerifiedKeyRow): number | null {
    const pending = this.usage.pendingLastUsed(key.id);
    const latest = Math.max(key.last_used ?? -1, pending ?? -1);
    return latest < 0 ? null : Math.floor(latest);
  }
}

/** Every name asked for is one of the key's permissions or a scope of its role; openid is one of every key. */
function mayDo(key: VerifiedKeyRow, asked: readonly string[]): boolean {
  const roleScopes: readonly string[] = scopesOf(key.role);
  return asked.every((name) => name === 'openid' || key.permissions.includes(name) || roleScopes.includes(name));
}

const notFound = (): VerifyKeyResult => ({ valid: false, code: 'NOT_FOUND' });

function resultOf(key: VerifiedKeyRow, code: VerifyCode, credits: number | null, rate: RateState | null, lastUsed: number | null): VerifyKeyResult {
  return {
    valid: code === 'VALID',
    code,
    appname: key.appname,
    roles: key.role ? [key.role] : [],
    permissions: key.permissions,
    expires_at: key.expires_at === null ? null : Math.floor(key.expires_at),
    credits: credits === null ? null : { remaining: credits },
    rate_limit: rate && { limit: rate.limit, remaining: Math.max(0, rate.remaining), reset: rate.reset },
    last_used: lastUsed,
  };
}
