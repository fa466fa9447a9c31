import type { ApiKeyRow } from './api-keys.repository';
import type { ApiKeyRecord, ApiKeyRecordWithAppkey } from './api-keys.responses';

/** The API key record of the spec, field by field; nothing else from the row goes out. */
export function presentApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    appname: row.appname,
    description: row.description,
    roles: row.role ? [row.role] : [],
    last_login: row.last_login,
    last_ip: row.last_ip,
  };
}

export function presentApiKeyWithSecret(row: ApiKeyRow, appkey: string): ApiKeyRecordWithAppkey {
  return { ...presentApiKey(row), appkey };
}
