/** Roles, lowest to highest. */
export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export type PrincipalType = 'user' | 'api_key';

/** The scopes of the key API, lowest first: each role grants a prefix of them. */
export const API_SCOPES = ['api-keys:read', 'api-keys:write', 'api-keys:admin'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** Who is calling, as established by the bearer middleware from a live session. */
export interface Principal {
  type: PrincipalType;
  id: string;
  name: string;
  role: Role | null;
  sessionId: string;
  /**
   * What this call may do: the scope the session was granted, within what the role grants now (all
   * of it when the login asked for no scope, so a role change applies on the next call).
   */
  scopes: readonly ApiScope[];
  /** The access token the call came with (GET /api/v1/me): its scope claim, and its `exp` in Unix seconds. */
  token?: { scope: string; expiresAt: number };
}

const ROLE_SCOPES: Record<Role, readonly ApiScope[]> = {
  viewer: API_SCOPES.slice(0, 1),
  editor: API_SCOPES.slice(0, 2),
  admin: API_SCOPES,
};

/** The scopes a role grants. */
export function scopesOf(role: Role | null): readonly ApiScope[] {
  return role ? ROLE_SCOPES[role] : [];
}

/**
 * What a principal's tokens may claim beyond `openid`: its role's scopes, then (for an API key) the
 * permissions its policy names for the owner's own APIs.
 */
export function grantableScopes(role: Role | null, permissions: readonly string[] = []): string[] {
  return [...scopesOf(role), ...permissions];
}

/** The full scope as a token carries it: `openid`, the role's scopes, and a key's permissions after them. */
export function scopeFor(role: Role | null, permissions: readonly string[] = []): string {
  return ['openid', ...grantableScopes(role, permissions)].join(' ');
}

/** The words of a scope string (RFC 6749 §3.3: space-delimited), each once. */
export function scopeWords(scope: string): string[] {
  return [...new Set(scope.split(' ').filter(Boolean))];
}

/** Whether every word of `scope` is `openid` or a scope in `allowed`. */
export function scopeWithin(scope: string, allowed: readonly string[]): boolean {
  return scopeWords(scope).every((word) => word === 'openid' || allowed.includes(word));
}

/**
 * What a call with a token may do now: the scope the token claims, within its session's granted
 * scope (null: all the role grants) and what the role grants now. The token's own claim counts, as
 * an exchanged token shares its subject's session but may claim less than the session holds; the
 * session's counts too, so a refresh that narrows it narrows the tokens issued before at once.
 */
export function effectiveScopes(role: Role | null, granted: string | null, claimed: string): readonly ApiScope[] {
  const held = scopeWords(heldScope(role, granted));
  const words = scopeWords(claimed);
  return scopesOf(role).filter((scope) => held.includes(scope) && words.includes(scope));
}

/**
 * The scope a session holds now, as a token would state it: the granted words (null: all of the
 * role's and a key's permissions, and openid) that the role and the permissions still allow; with
 * `claimed`, only those of its words (a token's scope, which may be narrower than its session's).
 */
export function heldScope(role: Role | null, granted: string | null, claimed?: string, permissions: readonly string[] = []): string {
  const grantable = grantableScopes(role, permissions);
  const held = granted === null ? scopeWords(scopeFor(role, permissions)) : scopeWords(granted).filter((word) => word === 'openid' || grantable.includes(word));
  return claimed === undefined ? held.join(' ') : scopeWords(claimed).filter((word) => held.includes(word)).join(' ');
}

/** Whether `after` grants less than `before` (no role is below every role). */
export function isLowerRole(after: Role | null, before: Role | null): boolean {
  const rank = (role: Role | null) => (role ? ROLES.indexOf(role) : -1);
  return rank(after) < rank(before);
}

export function canRead(role: Role | null): boolean {
  return role !== null;
}

export function canWrite(role: Role | null): boolean {
  return role === 'editor' || role === 'admin';
}

/**
 * Whether a principal may create, change or delete a key whose role is `target` (checked for the
 * role before and after the change). Editors manage keys up to editor; admins manage all.
 */
export function canManageKeyWithRole(role: Role | null, target: Role | null): boolean {
  if (role === 'admin') return true;
  if (role === 'editor') return target !== 'admin';
  return false;
}

/** The role rules and the token's scope together: what a call may do (least privilege). */
export const allows = {
  read: (p: Principal) => canRead(p.role) && p.scopes.includes('api-keys:read'),
  write: (p: Principal) => canWrite(p.role) && p.scopes.includes('api-keys:write'),
  manageKeyWithRole: (p: Principal, target: Role | null) =>
    canManageKeyWithRole(p.role, target) && p.scopes.includes('api-keys:write') && (target !== 'admin' || p.scopes.includes('api-keys:admin')),
  administer: (p: Principal) => p.role === 'admin' && p.scopes.includes('api-keys:admin'),
};
