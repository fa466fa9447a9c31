import type { Database, Queryable } from '../db/database';
import type { SecretBox } from '../crypto/secretbox';
import { sha256 } from '../crypto/digest';
import { forbidden, notFound } from '../errors';
import { canManageKeyWithRole, canRead, canWrite, type Principal, type Role } from '../auth/roles';
import { revokeSessionsOfApiKey } from '../sessions/sessions.repository';
import { generateAppkey } from './appkey';
import * as keys from './api-keys.repository';
import type { ApiKeyRow } from './api-keys.repository';
import type { CreateApiKeyInput, ListApiKeysInput, UpdateApiKeyInput } from './api-keys.schemas';

export interface ApiKeyWithSecret {
  key: ApiKeyRow;
  appkey: string;
}

const roleOf = (roles: readonly Role[]): Role | null => roles[0] ?? null;

/** API key management with the contract's role rules. Knows nothing of HTTP. */
export class ApiKeysService {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  async list(principal: Principal, page: ListApiKeysInput): Promise<ApiKeyRow[]> {
    assertCanRead(principal);
    return keys.listApiKeys(this.db, page);
  }

  async get(principal: Principal, appname: string): Promise<ApiKeyRow> {
    assertCanRead(principal);
    return (await keys.findApiKeyByAppname(this.db, appname)) ?? throwNotFound(appname);
  }

  async create(principal: Principal, input: CreateApiKeyInput): Promise<ApiKeyWithSecret> {
    const role = roleOf(input.roles);
    assertCanManage(principal, role);
    const appkey = generateAppkey();
    const key = await keys.insertApiKey(this.db, {
      appname: input.appname,
      description: input.description,
      role,
      ...this.sealAppkey(input.appname, appkey),
    });
    return { key, appkey };
  }

  /** Replaces description and role; the appkey and its sessions are untouched. */
  async update(principal: Principal, appname: string, input: UpdateApiKeyInput): Promise<ApiKeyRow> {
    const role = roleOf(input.roles);
    assertCanManage(principal, role);
    return this.db.withTransaction(async (tx) => {
      await this.lockManageable(tx, principal, appname);
      return keys.updateApiKeyContent(tx, appname, { description: input.description, role });
    });
  }

  /** Replaces the record and issues a new appkey; the old appkey and all its sessions die at once. */
  async regen(principal: Principal, appname: string, input: UpdateApiKeyInput): Promise<ApiKeyWithSecret> {
    const role = roleOf(input.roles);
    assertCanManage(principal, role);
    const appkey = generateAppkey();
    const key = await this.db.withTransaction(async (tx) => {
      const current = await this.lockManageable(tx, principal, appname);
      await revokeSessionsOfApiKey(tx, current.id, 'api key regenerated');
      return keys.replaceApiKeySecret(tx, appname, {
        description: input.description,
        role,
        ...this.sealAppkey(appname, appkey),
      });
    });
    return { key, appkey };
  }

  /** Deletes the key; its sessions go with it (ON DELETE CASCADE), so its tokens stop working. */
  async delete(principal: Principal, appname: string): Promise<void> {
    if (!canWrite(principal.role)) throw forbidden();
    await this.db.withTransaction(async (tx) => {
      await this.lockManageable(tx, principal, appname);
      await keys.deleteApiKey(tx, appname);
    });
  }

  /** The key and its appkey in the clear, for verifying a request token. */
  async findWithAppkey(appname: string): Promise<ApiKeyWithSecret | undefined> {
    const row = await keys.findApiKeySecretByAppname(this.db, appname);
    if (!row) return undefined;
    const { key_ciphertext: sealed, ...key } = row;
    return { key, appkey: this.box.open(sealed, appname).toString('utf8') };
  }

  private async lockManageable(tx: Queryable, principal: Principal, appname: string): Promise<ApiKeyRow> {
    const current = (await keys.findApiKeyForUpdate(tx, appname)) ?? throwNotFound(appname);
    assertCanManage(principal, current.role);
    return current;
  }

  /** The appname is bound into the ciphertext, so a sealed appkey cannot be moved to another row. */
  private sealAppkey(appname: string, appkey: string) {
    return { keyDigest: sha256(appkey), keyCiphertext: this.box.seal(appkey, appname) };
  }
}

function assertCanRead(principal: Principal): void {
  if (!canRead(principal.role)) throw forbidden();
}

function assertCanManage(principal: Principal, targetRole: Role | null): void {
  if (!canManageKeyWithRole(principal.role, targetRole)) throw forbidden();
}

function throwNotFound(appname: string): never {
  throw notFound(`API key "${appname}" not found`);
}
