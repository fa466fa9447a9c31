import { createPublicKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';

/** At most one fetch of the list per this many milliseconds, whatever arrives (contract: once a minute). */
export const REFETCH_INTERVAL_MS = 60_000;
/** How long one fetch of the list may take before it counts as failed. */
export const FETCH_TIMEOUT_MS = 5_000;

/** GitHub's format (GET /meta/public_keys/secret_scanning); fields beyond these are ignored. */
const keyList = z.object({
  public_keys: z.array(z.object({ key_identifier: z.string().min(1), key: z.string().min(1), is_current: z.boolean().optional() })).max(100),
});

/** A key named by `Github-Public-Key-Identifier`, or why there is none: not listed, or the list cannot be fetched now. */
export type KeyLookup = { key: KeyObject } | { unknown: true } | { unavailable: true };

/**
 * The public keys GitHub signs its secret scanning reports with, from the list at `url`, kept in
 * memory. A report naming an identifier not kept fetches the list again, at most once per
 * REFETCH_INTERVAL_MS (a failed fetch counts too, so an unreachable list is not hammered), and
 * concurrent reports share one fetch. Every key listed is accepted, current or not: GitHub may still
 * sign with the previous one while it rotates.
 */
export class GithubPublicKeys {
  private keys = new Map<string, KeyObject>();
  private lastAttemptAt: number | undefined;
  private lastAttemptFailed = false;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly now: () => number = Date.now,
    private readonly timeoutMs = FETCH_TIMEOUT_MS,
  ) {}

  async keyFor(identifier: string): Promise<KeyLookup> {
    const kept = this.keys.get(identifier);
    if (kept) return { key: kept };
    const due = this.lastAttemptAt === undefined || this.now() - this.lastAttemptAt >= REFETCH_INTERVAL_MS;
    if (due || this.inFlight) await (this.inFlight ??= this.fetch().finally(() => (this.inFlight = undefined)));
    const key = this.keys.get(identifier);
    if (key) return { key };
    // A list never fetched, or whose last fetch failed: GitHub retries on a 5xx, so the report is not lost.
    return this.lastAttemptFailed ? { unavailable: true } : { unknown: true };
  }

  private async fetch(): Promise<void> {
    this.lastAttemptAt = this.now();
    try {
      const res = await fetch(this.url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(this.timeoutMs) });
      if (!res.ok) throw new Error(`key list answered ${res.status}`);
      const parsed = keyList.parse(await res.json());
      const keys = new Map<string, KeyObject>();
      for (const listed of parsed.public_keys) {
        try {
          const key = createPublicKey(listed.key);
          // Only the curve GitHub signs with: P-256 (ECDSA with SHA-256).
          if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') keys.set(listed.key_identifier, key);
        } catch {
          // A key that does not parse cannot verify anything: the others still serve.
        }
      }
      this.keys = keys;
      this.lastAttemptFailed = false;
    } catch {
      this.lastAttemptFailed = true;
    }
  }
}
