import { Router, type NextFunction, type Request, type Response } from 'express';
import { authenticate, principalOf } from '../http/authenticate';
import { jsonBody } from '../http/body-parsers';
import type { RateLimits } from '../http/rate-limits';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import { parseInput } from '../http/validate';
import { PATHS } from '../shared/paths';
import { verifyKeyBody } from './verify.schemas';
import type { KeyVerifier } from './key-verifier';
import type { VerifyReadAlong } from './verify-read-along';

/**
 * POST /api/v1/keys/verify: refused-token limit (429) → authenticate (401) → a method not served
 * (405) → body parsing (415/413/400) → validation (400) → the verifier, which decides authorisation
 * (403). The body is parsed before the bearer check, so that the check's statement reads the key too
 * (VerifyReadAlong), but its errors are told after the check, in the order above. Not under the
 * per-principal limit of key operations: an API verifies on each of its own requests, and each key's
 * own rate limit is what the answer reports.
 */
export function verifyRouter(verifier: KeyVerifier, readAlong: VerifyReadAlong, limits: RateLimits): Router {
  const router = Router();
  router
    .route(PATHS.keysVerify)
    .post(...limits.bearerFailures, parseBodyEarly, authenticate(readAlong), tellBodyErrors, noStore, async function verifyKey(req: Request, res: Response) {
      const input = parseInput(verifyKeyBody, req.body, 'body');
      const principal = principalOf(res);
      res.json(await verifier.verify(principal, input, readAlong.readFor(principal)));
    })
    .all(methodNotAllowed(['POST']));
  return router;
}

/** jsonBody, its error kept for tellBodyErrors (after the bearer check) instead of answered now. */
function parseBodyEarly(req: Request, res: Response, next: NextFunction): void {
  const keep = (err?: unknown) => {
    if (err) {
      res.locals.bodyError = err;
      req.body = undefined;
    }
    next();
  };
  try {
    jsonBody(req, res, keep);
  } catch (err) {
    keep(err);
  }
}

function tellBodyErrors(_req: Request, res: Response, next: NextFunction): void {
  next(res.locals.bodyError);
}
