import type { NextFunction, Request, Response } from 'express';

/** Token responses must never be cached (RFC 6749 §5.1). */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  next();
}
