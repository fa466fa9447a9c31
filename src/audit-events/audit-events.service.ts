import type { Database } from '../db/database';
import { forbidden } from '../shared/errors';
import { allows, type Principal } from '../shared/principals';
import { listAuditEvents, type AuditEventRow } from './audit-events.repository';
import type { ListAuditEventsInput } from './audit-events.schemas';

/** Reading the audit trail. There is deliberately no way to change or delete an event. */
export class AuditService {
  constructor(private readonly db: Database) {}

  /** Admins only: events name principals, addresses and sessions. */
  async list(principal: Principal, filter: ListAuditEventsInput): Promise<AuditEventRow[]> {
    if (!allows.administer(principal)) throw forbidden('The audit trail is for admins only');
    return listAuditEvents(this.db, filter);
  }
}
