import { PATHS } from '../shared/paths';
import { BEARER, BODILESS_BEARER_ERRORS, errors, ok, parametersOf, type RoutesDescription } from '../http/openapi';
import { listAuditEventsQuery } from './audit-events.schemas';
import { auditEventListEnvelope, auditEventRecord } from './audit-events.responses';

function auditQueryParameters() {
  return parametersOf(listAuditEventsQuery, 'query', {
    limit: 'Page size, 1 to 1000; 100 when omitted.',
    before: 'Only events with a smaller id: the last id of the previous page.',
    appname: 'Only events about this API key.',
    username: 'Only events about this user.',
    actor: 'Only events by this actor, e.g. user:alice, api_key:billing, cli, system, anonymous.',
    type: 'Only events of this type.',
    since: 'Only events at or after this instant (ISO 8601 with a time zone).',
    until: 'Only events before this instant (ISO 8601 with a time zone).',
  });
}

/** The one operation of auditRouter: reading the trail, admins only. */
export function describeAuditEventRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.auditEvents]: {
        get: {
          operationId: 'v1_audit_events_get',
          summary: 'Page through the audit trail, newest first (admin only; read-only)',
          tags: ['Audit'],
          security: BEARER,
          parameters: auditQueryParameters(),
          responses: {
            200: ok('A page of audit events, newest first.', 'AuditEventListEnvelope'),
            ...errors(...BODILESS_BEARER_ERRORS),
          },
        },
      },
    },
    responseSchemas: { AuditEvent: auditEventRecord, AuditEventListEnvelope: auditEventListEnvelope },
  };
}
