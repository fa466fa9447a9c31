import { z } from 'zod';
import { flag, type EnvOf } from './env-kit';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;
const SCHEDULE_RULE = 'must be a comma-separated list of 1 to 20 durations such as 5s, 5m, 2h (units ms, s, m, h, d), each at most 7 days';

/** `5s,5m,30m` as milliseconds, or undefined when any part is not a duration of at most a week. */
function parseSchedule(text: string): number[] | undefined {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length < 1 || parts.length > 20) return undefined;
  const delays: number[] = [];
  for (const part of parts) {
    const match = DURATION.exec(part);
    if (!match) return undefined;
    const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    if (ms > 7 * UNIT_MS.d) return undefined;
    delays.push(ms);
  }
  return delays;
}

const milliseconds = (fallback: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(fallback);

/** Webhooks: how messages are sent, retried and kept, and which addresses they may go to. */
export const webhooksEnv = {
  WEBHOOK_TIMEOUT_MS: milliseconds(10_000, 100, 60_000).describe('How long one delivery attempt may take, milliseconds (100 to 60000); past it the attempt counts as failed'),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('5s,5m,30m,2h,5h,10h,10h')
    .refine((text) => parseSchedule(text) !== undefined, SCHEDULE_RULE)
    .describe('Delays before each retry of a failed attempt, comma-separated (units ms, s, m, h, d); after the last, the message is marked failed'),
  WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30).describe('Delivered and failed messages are deleted from the delivery log after this many days (1 to 3650)'),
  WEBHOOK_ALLOW_INSECURE: flag('false').describe(
    '`true` allows `http:` endpoint URLs and loopback, private and other non-public addresses: for development and tests only',
  ),
  WEBHOOK_POLL_INTERVAL_MS: milliseconds(1_000, 10, 60_000).describe('How often each instance looks for due messages, milliseconds (10 to 60000)'),
  WEBHOOK_MAX_IN_FLIGHT: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe(
      'Messages one instance sends to one endpoint at once (1 to 64). 1 (the default) sends them strictly one after another, in the order of their events; a higher value sends that many concurrently, so they may arrive in any order: it trades the order for throughput, and a receiver that needs the order should keep 1',
    ),
};

export function webhooksSettings(e: EnvOf<typeof webhooksEnv>) {
  return {
    webhooks: Object.freeze({
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryScheduleMs: Object.freeze(parseSchedule(e.WEBHOOK_RETRY_SCHEDULE)!),
      retentionDays: e.WEBHOOK_RETENTION_DAYS,
      allowInsecure: e.WEBHOOK_ALLOW_INSECURE === 'true',
      pollIntervalMs: e.WEBHOOK_POLL_INTERVAL_MS,
      maxInFlight: e.WEBHOOK_MAX_IN_FLIGHT,
    }),
  };
}
