/** Roles, lowest to highest. */
export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export type PrincipalType = 'user' | 'api_key';

/** Who is calling, as established by the bearer middleware from a live session. */
export interface Principal {
  type: PrincipalType;
  id: string;
  name: string;
  role: Role | null;
  sessionId: string;
}

const SCOPES: Record<Role, string> = {
  viewer: 'api-keys:read',
  editor: 'api-keys:read api-keys:write',
  admin: 'api-keys:read api-keys:write api-keys:admin',
};

export function scopeFor(role: Role | null): string {
  return role ? `openid ${SCOPES[role]}` : 'openid';
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
