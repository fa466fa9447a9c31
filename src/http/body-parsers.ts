import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from '../shared/errors';

export const BODY_LIMIT = '64kb';

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
}

/** A request that carries a body must declare one of these media types, or it is a 415. */
function requireMediaType(types: string[]) {
  return function checkMediaType(req: Request, _res: Response, next: NextFunction): void {
    if (hasBody(req) && !req.is(types)) {
      throw new AppError('UnsupportedMediaType', `Content-Type must be ${types.join(' or ')}`);
    }
    next();
  };
}

const json = express.json({ limit: BODY_LIMIT, strict: true, type: 'application/json' });
/**
 * The size limit alone does not bound the parser's work: qs copies the array of a repeated field at
 * each repeat, so 64 KiB of `a=&a=&...` takes seconds of the event loop. More fields than this is a
 * 400 (see error-handler), not body-parser's 413: the contract's only 413 is for size.
 */
export const FORM_FIELD_LIMIT = 1000;
const form = express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: FORM_FIELD_LIMIT, type: 'application/x-www-form-urlencoded' });

const jsonOnly = requireMediaType(['application/json']);

/**
 * Key routes: JSON only, for every method, since a body on a GET or DELETE is checked like any other
 * (415, 400, 413). One handler, so a request without a body, as most reads are, passes at once.
 */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  if (!hasBody(req)) return next();
  jsonOnly(req, res, () => json(req, res, next));
}

/** The one route that takes more: an import of up to 1000 keys with their policies. */
export const LARGE_BODY_LIMIT = '1mb';
const largeJson = express.json({ limit: LARGE_BODY_LIMIT, strict: true, type: 'application/json' });

/** jsonBody with the limit LARGE_BODY_LIMIT, for POST /api/v1/api-keys/import alone. */
export function largeJsonBody(req: Request, res: Response, next: NextFunction): void {
  if (!hasBody(req)) return next();
  jsonOnly(req, res, () => largeJson(req, res, next));
}

/** Token routes: JSON or form-urlencoded. */
export const jsonOrFormBody = [requireMediaType(['application/json', 'application/x-www-form-urlencoded']), json, form];
