import type { Database } from '../db/database';
import { badRequest, forbidden, notFound } from '../shared/errors';
import { allows, type Principal } from '../shared/principals';
import type { KeyRefusal } from '../shared/key-refusals';
import type { VerifyCode } from '../shared/verify-codes';
import { findKeyId, findUsage } from './usage.repository';
import type { UsageQueryInput } from './usage.schemas';
import type { UsageInterval } from './usage.responses';

const SIZE = { hour: 3_600, day: 86_400 } as const;
const DEFAULT_DAYS = 30;
/** The most intervals one answer may span (contract). */
export const MAX_INTERVALS = 1_000;

/**
 * GET /api/v1/api-keys/{appname}/usage: readable by whoever may get the key. The counts are as
 * written by the last flush of each instance (USAGE_FLUSH_SECONDS behind at most). Knows nothing of HTTP.
 */
export class KeyUsageService {
  constructor(
    private readonly db: Database,
    private readonly clock: () => number,
  ) {}

  /** The bounds (400), then authorisation (403), then existence (404): the contract's order. */
  async get(principal: Principal, appname: string, query: UsageQueryInput): Promise<UsageInterval[]> {
    const size = SIZE[query.interval];
    const until = query.until ?? Math.ceil(this.clock());
    const since = query.since ?? until - DEFAULT_DAYS * 86_400;
    if (since >= until) throw badRequest(query.until !== undefined ? 'query.until: must be after since' : 'query.since: must be before until (now when omitted)');
    const from = Math.floor(since / size) * size;
    if (Math.ceil((until - from) / size) > MAX_INTERVALS) {
      throw badRequest(`query.since: at most ${MAX_INTERVALS} ${query.interval}s per answer; ask for a later since or a larger interval`);
    }
    if (!allows.read(principal)) throw forbidden();
    const keyId = await findKeyId(this.db, appname);
    if (!keyId) throw notFound(`API key "${appname}" not found`);
    return intervalsOf(await findUsage(this.db, keyId, size, from, until));
  }
}

function intervalsOf(rows: Awaited<ReturnType<typeof findUsage>>): UsageInterval[] {
  const intervals: UsageInterval[] = [];
  for (const { start, kind, n } of rows) {
    let last = intervals.at(-1);
    if (!last || last.start !== start) intervals.push((last = { start, tokens: 0, verifications: {}, refused: {} }));
    if (kind === 'tokens') last.tokens = n;
    else if (kind.startsWith('verification:')) last.verifications[kind.slice('verification:'.length) as VerifyCode] = n;
    else if (kind.startsWith('refused:')) last.refused[kind.slice('refused:'.length) as KeyRefusal] = n;
  }
  return intervals;
}
