import { z } from 'zod';

const unixSeconds = z.coerce.number({ error: 'must be Unix seconds' }).int('must be whole Unix seconds').min(0, 'must be Unix seconds').max(253_402_300_799, 'must be before the year 10000');

export const usageQuery = z.strictObject({
  /** The length of each interval, aligned to UTC hours or days; day when omitted. */
  interval: z.enum(['hour', 'day'], { error: 'must be hour or day' }).default('day'),
  /** Unix seconds, inclusive (its interval is counted whole); 30 days before `until` when omitted. */
  since: unixSeconds.optional(),
  /** Unix seconds, exclusive; now when omitted. */
  until: unixSeconds.optional(),
});
export type UsageQueryInput = z.output<typeof usageQuery>;
