import type { Database } from '../db/database';
import { AppError, conflict, forbidden } from '../shared/errors';
import { allows, type Principal } from '../shared/principals';
import { contextOf, type RequestOrigin } from '../shared/audit-context';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { newPolicy } from '../key-policies/policy-rules';
import { findPolicyRecord, writePolicy } from '../key-policies/policy.repository';
import { presentPolicy } from '../key-policies/policy.presenter';
import { insertApiKey, type ApiKeyRow } from './api-keys.repository';
import type { ImportApiKeysInput } from './key-import.schemas';
import type { PolicySettings } from './key-policy.service';

/** Told when keys were imported here, so that this instance knows at once (see ImportedKeyPresence). */
export interface ImportListener {
  imported(): void;
}

/**
 * POST /api/v1/api-keys/import: keys from another system, known by the SHA-256 of each key, never the
 * key itself. Admins only. All or nothing, in one transaction: a duplicate appname or digest, within
 * the body or against a stored key, is a 409 and imports none. Each key gets its policy as a create
 * does (KEY_MAX_LIFETIME_DAYS included) and an `api_key.imported` event.
 */
export class KeyImportService {
  constructor(
    private readonly db: Database,
    private readonly policies: PolicySettings,
    private readonly listener: ImportListener = { imported: () => undefined },
  ) {}

  async import(principal: Principal, input: ImportApiKeysInput, origin: RequestOrigin): Promise<ApiKeyRow[]> {
    const now = this.policies.clock();
    // Every policy checked before anything is written, and before the role (400 before 403): a bad one is a 400 naming it.
    const policies = input.keys.map((key, i) => newPolicy(key.policy, { now, maxLifetimeDays: this.policies.maxLifetimeDays, at: `body.keys.${i}.policy` }));
    if (!allows.administer(principal)) throw forbidden();
    assertNoDuplicates(input);
    const ctx = contextOf(principal, origin);
    const created = await this.db.withTransaction(async (tx) => {
      const rows: ApiKeyRow[] = [];
      for (const [i, key] of input.keys.entries()) {
        const role = key.roles[0] ?? null;
        const row = await insertApiKey(tx, {
          appname: key.appname,
          description: key.description,
          role,
          keyDigest: Buffer.from(key.digest, 'hex'),
          keyCiphertext: null,
        }).catch((err: unknown) => {
          throw err instanceof AppError && err.status === 409 ? conflict(`body.keys.${i}: ${err.message}`) : err;
        });
        await writePolicy(tx, row.id, policies[i]!, now);
        const stored = (await findPolicyRecord(tx, row.appname, now))!;
        await recordAuditEvent(tx, ctx, { type: 'api_key.imported', appname: row.appname, details: { role, policy: presentPolicy(stored) } });
        rows.push(row);
      }
      return rows;
    });
    this.listener.imported();
    return created;
  }
}

/** A second key with an appname or digest of an earlier one in the same body: 409, naming both. */
function assertNoDuplicates(input: ImportApiKeysInput): void {
  const appnames = new Map<string, number>();
  const digests = new Map<string, number>();
  for (const [i, key] of input.keys.entries()) {
    const sameName = appnames.get(key.appname);
    if (sameName !== undefined) throw conflict(`body.keys.${i}.appname: the same as body.keys.${sameName}.appname`);
    const sameDigest = digests.get(key.digest);
    if (sameDigest !== undefined) throw conflict(`body.keys.${i}.digest: the same as body.keys.${sameDigest}.digest`);
    appnames.set(key.appname, i);
    digests.set(key.digest, i);
  }
}
