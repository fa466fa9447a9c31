import type { KeyPolicy } from './api';

/** What the keys table and a key's page flag: a key that does not work now, and why. */
export type KeyStatus = 'disabled' | 'expired' | undefined;

export function statusOf(policy: Pick<KeyPolicy, 'enabled' | 'expires_at'>, nowSeconds = Date.now() / 1000): KeyStatus {
  if (!policy.enabled) return 'disabled';
  if (policy.expires_at !== null && nowSeconds >= policy.expires_at) return 'expired';
  return undefined;
}

/** A badge for a key that does not work now; nothing for one that does. */
export function StatusBadge(props: { status: KeyStatus }) {
  if (!props.status) return null;
  return <span class={`badge badge-${props.status}`}>{props.status === 'disabled' ? 'Disabled' : 'Expired'}</span>;
}
