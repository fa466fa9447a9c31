import { Router, type Request, type Response } from 'express';
import { envelope } from '../shared/envelope';
import { authenticate, principalOf, type Authenticator } from '../http/authenticate';
import { jsonBody } from '../http/body-parsers';
import { methodNotAllowed } from '../http/error-handler';
import type { RateLimits } from '../http/rate-limits';
import { parseInput } from '../http/validate';
import { presentAuditEvent } from './audit-events.presenter';
import { listAuditEventsQuery } from './audit-events.schemas';
import type { AuditService } from './audit-events.service';

/**
 * GET /api/v1/audit-events: read-only, as the table itself is. Refused-token limit (429), authenticate (401), limit (429), a body
 * checked as on the key routes (415/413/400), query (400), admin (403).
 */
export function auditRouter(service: AuditService, authenticator: Authenticator, limits: RateLimits): Router {
  const router = Router();
  // Spread: router.use() would take a leading empty array (limits off) for a path.
  router.use(...limits.bearerFailures, authenticate(authenticator), ...limits.keyOperations);
  router
    .route('/')
    .get(jsonBody, async function listAuditEvents(req: Request, res: Response) {
      const filter = parseInput(listAuditEventsQuery, req.query, 'query');
      const rows = await service.list(principalOf(res), filter);
      res.json(envelope(200, rows.map(presentAuditEvent)));
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
