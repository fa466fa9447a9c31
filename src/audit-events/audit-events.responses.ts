import { z } from 'zod';
import { envelopeOf } from '../shared/envelope';
import { AUDIT_EVENT_TYPES } from '../shared/audit-context';

/** An audit event as the presenter sends it; the source of the OpenAPI response schemas. */
export const auditEventRecord = z.strictObject({
  id: z.int().min(1).meta({ description: 'Increases with every event (taken at insert, so concurrent events may commit out of id order); pass the last id of a page as `before` for the next.' }),
  occurred_at: z.iso.datetime().meta({ description: 'When the change happened (the start of its transaction), UTC.' }),
  type: z.enum(AUDIT_EVENT_TYPES),
  actor: z.string().meta({ description: 'Who did it: user:<username>, api_key:<appname>, cli, system or anonymous.' }),
  appname: z.string().nullable().meta({ description: 'The API key the event is about, if any.' }),
  username: z.string().nullable().meta({ description: 'The user the event is about, if any.' }),
  client_address: z.string().nullable().meta({ description: 'The caller\'s address; null for the command line.' }),
  request_id: z.string().nullable().meta({ description: 'The X-Request-Id of the request; null for the command line.' }),
  details: z.record(z.string(), z.unknown()).meta({ description: 'Type-specific facts: roles before and after, reason, route, session id. Never a secret.' }),
});

export const auditEventListEnvelope = envelopeOf(z.array(auditEventRecord));

export type AuditEventRecord = z.output<typeof auditEventRecord>;
