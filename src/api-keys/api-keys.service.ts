import type { Database, Queryable } from '../db/database';
import type { SecretBox } from '../crypto/secretbox';
import { sha256 } from '../crypto/digest';
import { badRequest, forbidden, notFound } from '../shared/errors';
import { allows, isLowerRole, type Principal, type Role } from '../shared/principals';
import { revokeSessionsOfApiKey, revokeSessionsOfStaleAppkeys } from '../sessions/revocation';
import { contextOf, type RequestOrigin } from '../shared/audit-context';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { generateAppkey } from './appkey';
import type { ValidAppkeys } from './valid-appkeys';
import type { KeyFinder } from './key-read-along';
import * as keys from './api-keys.repository';
import type { ApiKeyRow } from './api-keys.repository';
import type { CreateApiKeyInput, ListApiKeysInput, UpdateApiKeyInput } from './api-keys.schemas';
import { newPolicy } from '../key-policies/policy-rules';
import { findPolicyRecord, writePolicy } from '../key-policies/policy.repository';
import { presentPolicy } from '../key-policies/policy.presenter';
import type { PolicySettings } from './key-policy.service';

export interface ApiKeyWithSecret {
  key: ApiKeyRow;
  appkey: string;
}

const roleOf = (roles: readonly Role[]): Role | null => roles[0] ?? null;

/**
 * The longest grace each role may give a replaced appkey: an editor's hour covers a rolling deploy;
 * keeping a possibly leaked appkey alive for days is an admin's call.
 */
const MAX_GRACE_SECONDS: Partial<Record<Role, number>> = { editor: 3_600, admin: 604_800 };

/** API key management with the contract's role rules. Knows nothing of HTTP. */
export class ApiKeysService {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    private readonly finder: KeyFinder,
    private readonly appkeys: ValidAppkeys,
    private readonly policies: PolicySettings,
  ) {}

  /** A page of keys, as arrays of their listed fields (see listApiKeys). */
  async list(principal: Principal, page: ListApiKeysInput): Promise<keys.ListedApiKey[]> {
    assertCanRead(principal);
    return keys.listApiKeys(this.db, page);
  }

  /** Authorisation (403) before existence (404). */
  async get(principal: Principal, appname: string): Promise<ApiKeyRow> {
    assertCanRead(principal);
    return (await this.finder.find(principal, appname)) ?? throwNotFound(appname);
  }

  /**
   * Creates the key with its policy in one transaction, so it is never usable before its policy holds
   * (with KEY_MAX_LIFETIME_DAYS set, a policy without expires_at gets the longest lifetime).
   */
  async create(principal: Principal, input: CreateApiKeyInput, origin: RequestOrigin): Promise<ApiKeyWithSecret> {
    const role = roleOf(input.roles);
    const now = this.policies.clock();
    // The policy's checks are validation: a 400 before the role's 403.
    const policy = newPolicy(input.policy, { now, maxLifetimeDays: this.policies.maxLifetimeDays, at: 'body.policy' });
    assertCanManage(principal, role);
    const appkey = generateAppkey();
    const key = await this.db.withTransaction(async (tx) => {
      const created = await keys.insertApiKey(tx, {
        appname: input.appname,
        description: input.description,
        role,
        ...this.sealAppkey(input.appname, appkey),
      });
      await writePolicy(tx, created.id, policy, now);
      const stored = (await findPolicyRecord(tx, created.appname, now))!;
      await recordAuditEvent(tx, contextOf(principal, origin), {
        type: 'api_key.created',
        appname: created.appname,
        details: { role: created.role, policy: presentPolicy(stored) },
      });
      return created;
    });
    return { key, appkey };
  }

  /** Replaces description and role; the appkey is untouched, and so are its sessions unless the role was lowered. */
  async update(principal: Principal, appname: string, input: UpdateApiKeyInput, origin: RequestOrigin): Promise<ApiKeyRow> {
    const role = roleOf(input.roles);
    assertCanManage(principal, role);
    return this.db.withTransaction(async (tx) => {
      const before = await this.lockManageable(tx, principal, appname);
      const after = await keys.updateApiKeyContent(tx, appname, { description: input.description, role });
      const revoked = await this.endSessionsIfLowered(tx, principal, origin, before, after);
      await recordAuditEvent(tx, contextOf(principal, origin), {
        type: 'api_key.updated',
        appname,
        details: { role_before: before.role, role_after: after.role, ...(revoked !== undefined && { sessions_revoked: revoked }) },
      });
      return after;
    });
  }

  /**
   * Replaces the record and issues a new appkey. Without a grace the old appkey and all its sessions
   * die at once; with one, they live on until it ends. Either way any appkey older than the one
   * replaced dies now, so a regen during a grace ends that grace.
   */
  async regen(
    principal: Principal,
    appname: string,
    input: UpdateApiKeyInput,
    { graceSeconds }: { graceSeconds: number },
    origin: RequestOrigin,
  ): Promise<ApiKeyWithSecret> {
    const role = roleOf(input.roles);
    assertGraceWithinCap(principal, graceSeconds);
    assertCanManage(principal, role);
    const appkey = generateAppkey();
    const key = await this.db.withTransaction(async (tx) => {
      const before = await this.lockManageable(tx, principal, appname);
      const after = await keys.replaceApiKeySecret(tx, appname, {
        description: input.description,
        role,
        graceSeconds,
        ...this.sealAppkey(appname, appkey),
      });
      const revoked = await revokeSessionsOfStaleAppkeys(tx, before.id, 'api key regenerated');
      await recordAuditEvent(tx, contextOf(principal, origin), {
        type: 'api_key.regenerated',
        appname,
        details: {
          role_before: before.role,
          role_after: after.role,
          grace_seconds: graceSeconds,
          previous_key_valid_until: after.previous_key_valid_until?.toISOString() ?? null,
          sessions_revoked: revoked,
        },
      });
      return after;
    });
    // Not needed for correctness (see ValidAppkeys), but spares this instance's next exchange a miss.
    this.appkeys.forget(appname);
    return { key, appkey };
  }

  /** Deletes the key; its sessions go with it (ON DELETE CASCADE), so its tokens stop working. */
  async delete(principal: Principal, appname: string, origin: RequestOrigin): Promise<void> {
    if (!allows.write(principal)) throw forbidden();
    await this.db.withTransaction(async (tx) => {
      const before = await this.lockManageable(tx, principal, appname);
      await keys.deleteApiKey(tx, appname);
      await recordAuditEvent(tx, contextOf(principal, origin), {
        type: 'api_key.deleted',
        appname,
        details: { role: before.role },
      });
    });
    this.appkeys.forget(appname);
  }

  /**
   * Re-seals under the current MASTER_KEY every appkey (current or previous) still sealed under
   * MASTER_KEY_PREVIOUS, and returns how many it re-sealed. Runs in the caller's transaction, so
   * `keys rewrap` re-seals appkeys and signing keys all or nothing; the rows stay locked until
   * then, so a concurrent regen waits instead of being overwritten.
   */
  async resealAppkeys(tx: Queryable): Promise<number> {
    let resealed = 0;
    for (const row of await keys.lockSealedAppkeys(tx)) {
      const current = row.key_ciphertext ? (this.box.reseal(row.key_ciphertext, row.appname) ?? null) : null;
      const previous = row.previous_key_ciphertext ? (this.box.reseal(row.previous_key_ciphertext, row.appname) ?? null) : null;
      if (!current && !previous) continue;
      await keys.updateSealedAppkeys(tx, row.appname, current, previous);
      resealed += Number(current !== null) + Number(previous !== null);
    }
    return resealed;
  }


  /**
   * A lowered role ends every session of the key (as `users set-role` does for a user): a token
   * obtained under the higher role must not go on claiming its scope. Returns how many ended, or
   * undefined when the role was not lowered.
   */
  private async endSessionsIfLowered(tx: Queryable, principal: Principal, origin: RequestOrigin, before: ApiKeyRow, after: ApiKeyRow): Promise<number | undefined> {
    if (!isLowerRole(after.role, before.role)) return undefined;
    return revokeSessionsOfApiKey(tx, after.id, 'role_changed', contextOf(principal, origin));
  }

  private async lockManageable(tx: Queryable, principal: Principal, appname: string) {
    const current = (await keys.findApiKeyForUpdate(tx, appname)) ?? throwNotFound(appname);
    assertCanManage(principal, current.role);
    return current;
  }

  /** The appname is bound into the ciphertext, so a sealed appkey cannot be moved to another row. */
  private sealAppkey(appname: string, appkey: string) {
    return { keyDigest: sha256(appkey), keyCiphertext: this.box.seal(appkey, appname) };
  }
}

/** A bad value (400) comes before a refusal (403): only a role that may regen has a cap to exceed. */
function assertGraceWithinCap(principal: Principal, graceSeconds: number): void {
  const cap = principal.role && MAX_GRACE_SECONDS[principal.role];
  if (cap !== undefined && cap !== null && graceSeconds > cap) {
    throw badRequest(`query.grace_seconds: must be at most ${cap} seconds for an ${principal.role} (the cap of the caller's role)`);
  }
}

function assertCanRead(principal: Principal): void {
  if (!allows.read(principal)) throw forbidden();
}

function assertCanManage(principal: Principal, targetRole: Role | null): void {
  if (!allows.manageKeyWithRole(principal, targetRole)) throw forbidden();
}

function throwNotFound(appname: string): never {
  throw notFound(`API key "${appname}" not found`);
}
