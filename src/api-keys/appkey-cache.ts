import { ExpiringMap, type ExpiringMapLimits } from '../cache/expiring-map';

/** An appkey that may verify a request token right now, with the generation sessions it opens get. */
export interface ValidAppkey {
  appkey: string;
  generation: number;
}

/** What an exchange needs of a key before it writes: which row, and the appkeys that may verify. */
export interface KeyAppkeys {
  id: string;
  appname: string;
  /** The current appkey first; then the previous one while its grace lasts. */
  appkeys: ValidAppkey[];
}

/**
 * Unsealed appkeys by appname, so that an exchange skips a database round trip and an AES-GCM open
 * (the exchange benchmark). An entry may be stale, and that is safe: the exchange's write accepts
 * only the key's current id and a generation still valid, and the exchange reads afresh whenever a
 * cached entry fails. Size and age are bounded so that a deleted key's appkey does not linger. The
 * master key, which opens every appkey, is in this process anyway: the cache adds no new secret.
 */
export class AppkeyCache {
  private readonly entries: ExpiringMap<string, KeyAppkeys>;

  constructor(limits: ExpiringMapLimits = { maxEntries: 10_000, ttlMs: 60_000 }) {
    this.entries = new ExpiringMap(limits);
  }

  get(appname: string): KeyAppkeys | undefined {
    return this.entries.get(appname);
  }

  set(value: KeyAppkeys): void {
    this.entries.set(value.appname, value);
  }

  forget(appname: string): void {
    this.entries.delete(appname);
  }
}
