import type { Principal } from './principals';

/** Every kind of event the audit trail records. */
export const AUDIT_EVENT_TYPES = [
  'api_key.created',
  'api_key.updated',
  'api_key.regenerated',
  'api_key.deleted',
  'api_key.policy_changed',
  'api_key.disabled',
  'api_key.enabled',
  'api_key.expired',
  'api_key.imported',
  'api_key.leaked',
  'token.issued',
  'token.refused',
  'token.exchanged',
  'login.failed',
  'login.throttled',
  'refresh_token.reused',
  'session.revoked',
  'user.created',
  'user.updated',
  'user.password_changed',
  'user.deleted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.tested',
  // Written by the command line before users had an API (#37), now user.updated: kept so that older
  // trails still read and filter.
  'user.role_changed',
  'user.disabled',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** Where a request came from, as far as the audit trail cares. Null outside HTTP (the CLI). */
export interface RequestOrigin {
  clientAddress: string | null;
  requestId: string | null;
  /** The route template, e.g. /api/v1/auth/token. */
  route: string | null;
}

/**
 * Who did it and from where. `actor` is `user:<username>`, `api_key:<appname>`, `cli` (an operator
 * at the command line), `system` (the service itself, e.g. the bootstrap admin) or `anonymous`
 * (a caller who failed to log in).
 */
export interface AuditContext extends RequestOrigin {
  actor: string;
}

export interface AuditEvent {
  type: AuditEventType;
  appname?: string | null;
  username?: string | null;
  /** Roles, reasons, routes, session ids: never a secret. */
  details?: Record<string, unknown>;
}

const NO_ORIGIN: RequestOrigin = { clientAddress: null, requestId: null, route: null };

export const CLI_CONTEXT: AuditContext = Object.freeze({ ...NO_ORIGIN, actor: 'cli' });
export const SYSTEM_CONTEXT: AuditContext = Object.freeze({ ...NO_ORIGIN, actor: 'system' });

function principalActor(principal: Pick<Principal, 'type' | 'name'>): string {
  return `${principal.type}:${principal.name}`;
}

export function contextOf(principal: Pick<Principal, 'type' | 'name'>, origin: RequestOrigin): AuditContext {
  return { ...origin, actor: principalActor(principal) };
}
