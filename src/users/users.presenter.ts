import type { Principal } from '../shared/principals';
import type { User } from './users.service';
import type { MeRecord, UserRecord } from './users.responses';

const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** The user record of the contract, field by field: never the hash, never the id. */
export function presentUser(user: User): UserRecord {
  return {
    username: user.username,
    role: user.role,
    disabled: user.disabled,
    created_at: unixSeconds(user.created_at),
    last_login: user.last_login === null ? null : unixSeconds(user.last_login),
  };
}

/** The caller and the token it called with. */
export function presentMe(principal: Principal): MeRecord {
  return {
    principal_type: principal.type,
    name: principal.name,
    roles: principal.role ? [principal.role] : [],
    scope: principal.token?.scope ?? '',
    expires_at: principal.token?.expiresAt ?? 0,
  };
}
