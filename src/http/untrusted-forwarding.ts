import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger';

export const UNTRUSTED_FORWARDING_WARNING =
  'requests carry X-Forwarded-For but TRUST_PROXY is unset: every client shares the proxy\'s address for the rate limits ' +
  '(failed logins from anyone behind it lock out everyone behind it), the audit trail and last_ip; set TRUST_PROXY to your proxies';

/**
 * With TRUST_PROXY unset, a request that carries X-Forwarded-For came through a proxy the service
 * was not told of: said once per start, since the address every limit counts by is then the proxy's.
 */
export function warnOfUntrustedForwarding(logger: Logger) {
  let warned = false;
  return function untrustedForwarding(req: Request, _res: Response, next: NextFunction): void {
    if (!warned && req.headers['x-forwarded-for'] !== undefined) {
      warned = true;
      logger.warn({ proxy: req.socket.remoteAddress }, UNTRUSTED_FORWARDING_WARNING);
    }
    next();
  };
}
