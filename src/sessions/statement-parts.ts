import type { UnnestColumn } from '../db/unnest';
import type { RequestOrigin } from '../shared/audit-context';
import { ROLES, scopesOf } from '../shared/principals';

/** A session's times, in Unix seconds, as the statements that open or rotate one return them. */
export interface SessionTimes {
  /** When the current refresh token expires. */
  refresh_expires_at: number;
  created_at: number;
}

// floor, not a rounding cast: a refresh token must never claim a second it does not have.
// float8 comes back from pg as a number (bigint would be a string).
const epoch = (column: string) => `floor(extract(epoch FROM ${column}))::float8`;

/** A session's times as SessionTimes names them, read from `source` (a sessions row, or one made of it). */
export const timesOf = (source: string) =>
  `${epoch(`${source}.refresh_expires_at`)} AS refresh_expires_at, ${epoch(`${source}.created_at`)} AS created_at`;

/** Whether session `s` belongs to a user or an API key: the one place the two are told apart. */
export const principalTypeOf = (s: string) => `CASE WHEN ${s}.user_id IS NOT NULL THEN 'user' ELSE 'api_key' END`;

/** Audit columns for rows of `source` that carry `type` ('user' | 'api_key') and `name`. */
export const principalColumns = (source: string) => ({
  actor: `${source}.type || ':' || ${source}.name`,
  appname: `CASE WHEN ${source}.type = 'api_key' THEN ${source}.name END`,
  username: `CASE WHEN ${source}.type = 'user' THEN ${source}.name END`,
});

/** The request's origin as the last three parameters of a statement that records an event, from `$first`. */
export const originParams = (first: number) => ({ clientAddress: `$${first}`, requestId: `$${first + 1}`, route: `$${first + 2}::text` });
export const originValues = (o: RequestOrigin) => [o.clientAddress, o.requestId, o.route];

/** The same for a batch (see unnestRows): its last three columns, and their names on a row of `source`. */
export const originColumns = <T extends { origin: RequestOrigin }>(): UnnestColumn<T>[] => [
  { name: 'client_address', type: 'text', of: (item) => item.origin.clientAddress },
  { name: 'request_id', type: 'text', of: (item) => item.origin.requestId },
  { name: 'route', type: 'text', of: (item) => item.origin.route },
];
export const originColumnsOf = (source: string) => ({
  clientAddress: `${source}.client_address`,
  requestId: `${source}.request_id`,
  route: `${source}.route`,
});

/** Role `role`'s scopes and `openid`, as an SQL text[] (from the one table of scopes in shared/principals.ts). */
const scopesOfRole = (role: string) =>
  `(CASE ${role} ${ROLES.map((r) => `WHEN '${r}' THEN ARRAY[${['openid', ...scopesOf(r)].map((w) => `'${w}'`).join(', ')}]`).join(' ')} ELSE ARRAY['openid'] END)::text[]`;

/**
 * Whether the requested `scope` (an SQL text expression; NULL: none asked, all the role grants) is
 * within what role `role` grants, and for an API key the permissions of its policy (`permissions`,
 * an SQL text[] expression). Checked in the statement that opens a session, so it reads the
 * role as the database holds it at that moment, never as a cache remembers it.
 */
export const scopeGrantedBy = (scope: string, role: string, permissions?: string) =>
  `(${scope} IS NULL OR string_to_array(${scope}, ' ') <@ ${permissions ? `(${scopesOfRole(role)} || ${permissions})` : scopesOfRole(role)})`;
