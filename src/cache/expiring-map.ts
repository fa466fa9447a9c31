export interface ExpiringMapLimits {
  maxEntries: number;
  ttlMs: number;
}

/**
 * A Map bounded in size and in age, for caches of rows that must not linger: an entry past its age
 * reads as absent, and when full the entry set longest ago makes room.
 */
export class ExpiringMap<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  constructor(private readonly limits: ExpiringMapLimits) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.value;
    if (entry) this.entries.delete(key);
    return undefined;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    // Maps iterate in insertion order: the first entry is the oldest.
    if (this.entries.size >= this.limits.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAt: Date.now() + this.limits.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }
}
