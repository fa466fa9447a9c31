import type { Request } from 'express';
import type { RequestOrigin } from '../shared/audit-context';

/** `/api/v1/api-keys` + `/` is the mount itself, not `/api/v1/api-keys/`. */
export const joinTemplate = (baseUrl: string, path: string) => (baseUrl && path === '/' ? baseUrl : baseUrl + path);

/** Client address (as `trust proxy` resolves it), request id and route template, for the audit trail. */
export function originOf(req: Request): RequestOrigin {
  const routePath = (req.route as { path?: unknown } | undefined)?.path;
  return {
    clientAddress: req.ip ?? null,
    requestId: req.res?.locals.requestId ?? null,
    route: typeof routePath === 'string' ? joinTemplate(req.baseUrl, routePath) : null,
  };
}
