import { z } from 'zod';
import { APPNAME_PATTERN } from '../shared/names';
import { AUDIT_EVENT_TYPES } from '../shared/audit-context';

const MAX_EVENT_ID = Number.MAX_SAFE_INTEGER;

const limit = z
  .string()
  .regex(/^\d{1,4}$/, 'must be a whole number from 1 to 1000')
  .transform(Number)
  .pipe(z.number().min(1, 'must be a whole number from 1 to 1000').max(1000, 'must be a whole number from 1 to 1000'));

const eventId = z
  .string()
  .regex(/^\d{1,16}$/, 'must be an event id (a whole number)')
  .transform(Number)
  .pipe(z.number().min(1, 'must be an event id (a whole number)').max(MAX_EVENT_ID, 'must be an event id (a whole number)'));

const instant = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00Z' })
  .transform((s) => new Date(s));

export const listAuditEventsQuery = z
  .strictObject({
    /** Page size, 1 to 1000. */
    limit: limit.default(100),
    /** Only events older than this id: pass the last id of a page to get the next. */
    before: eventId.optional(),
    /** Only events about this API key. */
    appname: z.string().regex(APPNAME_PATTERN, 'must be an appname').optional(),
    /** Only events about this user. */
    username: z.string().min(1).max(64, 'must be at most 64 characters').optional(),
    /** Only events caused by this actor: user:<username>, api_key:<appname>, cli, system or anonymous. */
    actor: z.string().min(1).max(200, 'must be at most 200 characters').optional(),
    /** Only events of this type. */
    type: z.enum(AUDIT_EVENT_TYPES, { error: `must be one of ${AUDIT_EVENT_TYPES.join(', ')}` }).optional(),
    /** Only events at or after this time. */
    since: instant.optional(),
    /** Only events before this time. */
    until: instant.optional(),
  })
  .refine((q) => !q.since || !q.until || q.since < q.until, { message: 'must be earlier than until', path: ['since'] });

export type ListAuditEventsInput = z.output<typeof listAuditEventsQuery>;
