import type { ApiKeyRow } from './api-keys.repository';

/** The API key record of the spec, field by field; nothing else from the row goes out. */
export interface ApiKeyRecord {
  appname: string;
  description: string;
  roles: string[];
  last_login: number | null;
  last_ip: string | null;
}

export interface Envelope<T> {
  meta: { code: number; count: number };
  data: T;
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

/** The same envelope as text, around records that are JSON text already. */
export function envelopeAroundJson(code: number, count: number, recordsJson: string): string {
  return `{"meta":${JSON.stringify({ code, count })},"data":${recordsJson}}`;
}

/** `meta.code` mirrors the HTTP status; `meta.count` is the number of records in `data`. */
export function envelope<T>(code: number, data: T): Envelope<T> {
  return { meta: { code, count: Array.isArray(data) ? data.length : 1 }, data };
}
