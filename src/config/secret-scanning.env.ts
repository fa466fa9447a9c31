import { z } from 'zod';
import type { EnvOf } from './env-kit';

/** GitHub's published keys for its secret scanning partner programme. */
export const GITHUB_SECRET_SCANNING_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning';

/** Leaks reported by GitHub secret scanning (contract, "Leaked keys reported by GitHub secret scanning"). */
export const secretScanningEnv = {
  SECRET_SCANNING_KEYS_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http: or https: URL' })
    .default(GITHUB_SECRET_SCANNING_KEYS_URL)
    .describe(
      "Where the public keys that sign GitHub's secret scanning reports are listed (GitHub's format: `{\"public_keys\": [{\"key_identifier\", \"key\", \"is_current\"}]}`). Fetched when a report names a key not yet known, at most once a minute",
    ),
  LEAKED_KEY_ACTION: z
    .enum(['disable', 'report'])
    .default('disable')
    .describe(
      '`disable`: a live key reported as leaked is turned off (`disabled_reason` `leaked`, its tokens stop working); `report`: the leak is only recorded (`api_key.leaked`)',
    ),
};

export function secretScanningSettings(e: EnvOf<typeof secretScanningEnv>) {
  return { secretScanning: { keysUrl: e.SECRET_SCANNING_KEYS_URL, leakedKeyAction: e.LEAKED_KEY_ACTION } };
}
