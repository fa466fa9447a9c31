import { ROLES, type Role } from '../shared/principals';
import type { ApiKeyRow, ListedApiKey } from './api-keys.repository';
import { envelope } from '../shared/envelope';

/** The API key record of the spec, field by field; nothing else from the row goes out. */
export interface ApiKeyRecord {
  appname: string;
  description: string;
  roles: readonly string[];
  last_login: number | null;
  last_ip: string | null;
}

export function presentApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    appname: row.appname,
    description: row.description,
    roles: row.role ? [row.role] : [],
    last_login: row.last_login,
    last_ip: row.last_ip,
  };
}

export function presentApiKeyWithSecret(row: ApiKeyRow, appkey: string): ApiKeyRecord & { appkey: string } {
  return { ...presentApiKey(row), appkey };
}

// One shared roles array per role: a page of 1000 records then allocates one object per key, no more.
const ROLES_OF = Object.fromEntries(ROLES.map((role) => [role, Object.freeze([role])])) as Record<Role, readonly Role[]>;
const NO_ROLES: readonly Role[] = Object.freeze([]);

/** presentApiKey for a listed key (an array row, see listApiKeys). */
function presentListedApiKey([appname, description, role, lastLogin, lastIp]: ListedApiKey): ApiKeyRecord {
  return { appname, description, roles: role === null ? NO_ROLES : ROLES_OF[role], last_login: lastLogin, last_ip: lastIp };
}

/**
 * Records per part of a listed page: ~7 KiB of JSON for typical records, far below V8's ~128 KiB
 * large-object size. Only descriptions full of escaped characters could take a part over it, which
 * would cost speed, not correctness.
 */
const RECORDS_PER_PART = 50;

/**
 * envelope(200, records) for a listed page, as JSON.stringify would write it, but in parts to be
 * sent one after the other (see sendJsonParts): a page of 1000 is never one string.
 */
export function listPageJsonParts(keys: readonly ListedApiKey[]): string[] {
  // meta as envelope() writes it for these records; data follows, part by part.
  const parts = [`{"meta":${JSON.stringify(envelope(200, keys).meta)},"data":[`];
  for (let i = 0; i < keys.length; i += RECORDS_PER_PART) {
    const records = JSON.stringify(keys.slice(i, i + RECORDS_PER_PART).map(presentListedApiKey));
    // The records without their array's brackets (a slice, not a copy), after the comma that joins
    // them to the part before: a part of its own, as prefixing it would copy the records.
    if (i > 0) parts.push(',');
    parts.push(records.slice(1, -1));
  }
  parts.push(']}');
  return parts;
}
