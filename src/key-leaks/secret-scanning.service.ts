import { verify } from 'node:crypto';
import type { Database } from '../db/database';
import { sha256 } from '../crypto/digest';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { disableKey } from '../key-policies/policy.repository';
import { recordKeysDisabled } from '../api-keys/key-switches';
import type { Clock } from '../key-policies/policy';
import { AppError, UnauthorizedError } from '../shared/errors';
import type { RequestOrigin } from '../shared/audit-context';
import { keyWithDigest, lockKeysByDigests } from './leaked-keys.repository';
import type { GithubPublicKeys } from './github-public-keys';
import type { SecretScanningReport } from './key-leaks.schemas';
import type { SecretScanningAnswer } from './key-leaks.responses';

export type LeakedKeyAction = 'disable' | 'report';

/** The two headers GitHub signs a report with. */
export interface ReportSignature {
  identifier: string | undefined;
  signature: string | undefined;
}

/**
 * POST /api/v1/secret-scanning/github: leaks reported by GitHub's secret scanning partner programme.
 * A report is believed only when GitHub's ECDSA P-256 signature of its raw bytes holds; each token
 * that is a live key of this service then gets LEAKED_KEY_ACTION and an `api_key.leaked` event.
 */
export class SecretScanning {
  constructor(
    private readonly db: Database,
    private readonly keys: GithubPublicKeys,
    private readonly action: LeakedKeyAction,
    private readonly clock: Clock,
  ) {}

  /** 401 unless the signature holds; 503 when the key it names cannot be learnt now (GitHub retries). */
  async checkSignature(raw: Buffer, { identifier, signature }: ReportSignature): Promise<void> {
    if (!identifier || !signature || identifier.length > 200 || !/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) {
      throw new UnauthorizedError('Github-Public-Key-Identifier and Github-Public-Key-Signature are required', false);
    }
    const found = await this.keys.keyFor(identifier);
    if ('unavailable' in found) throw new AppError('ServiceUnavailable', "GitHub's secret scanning keys cannot be fetched now; try again later");
    if ('unknown' in found) throw new UnauthorizedError('Unknown Github-Public-Key-Identifier', false);
    let holds = false;
    try {
      holds = verify('sha256', raw, { key: found.key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
    } catch {
      // A signature that is not DER at all: refused like a wrong one.
    }
    if (!holds) throw new UnauthorizedError('Github-Public-Key-Signature does not verify', false);
  }

  /** Labels every reported token; acts on those that are live keys, in one transaction. */
  async handle(report: SecretScanningReport, origin: RequestOrigin): Promise<SecretScanningAnswer> {
    const digests = report.map((finding) => sha256(finding.token));
    const now = this.clock();
    const ctx = { ...origin, actor: 'system' };
    const ours = await this.db.withTransaction(async (tx) => {
      const keys = await lockKeysByDigests(tx, [...new Map(digests.map((d) => [d.toString('hex'), d])).values()], now);
      const found = report.map((_, i) => keyWithDigest(keys, digests[i]!));
      for (const [i, key] of found.entries()) {
        // Disabled (for whatever reason, a leak reported before included) or expired: nothing to stop.
        if (!key || !key.enabled || key.expired) continue;
        const { url, source, type } = report[i]!;
        if (this.action === 'disable') {
          const switched = await disableKey(tx, key.id, 'leaked');
          if (!switched) continue;
          key.enabled = false;
          await recordKeysDisabled(tx, ctx, [switched], 'leaked');
        }
        await recordAuditEvent(tx, ctx, {
          type: 'api_key.leaked',
          appname: key.appname,
          details: { reporter: 'github', url, source, token_type: type, action: this.action === 'disable' ? 'disabled' : 'reported' },
        });
      }
      return found.map((key) => key !== undefined);
    });
    return report.map((finding, i) => ({
      token_hash: digests[i]!.toString('hex'),
      token_type: finding.type,
      label: ours[i] ? 'true_positive' : 'false_positive',
    }));
  }
}
