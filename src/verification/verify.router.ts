import { Router, type Request, type Response } from 'express';
import { authenticate, principalOf, type Authenticator } from '../http/authenticate';
import { jsonBody } from '../http/body-parsers';
import type { RateLimits } from '../http/rate-limits';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import { parseInput } from '../http/validate';
import { PATHS } from '../shared/paths';
import { verifyKeyBody } from './verify.schemas';
import type { KeyVerifier } from './key-verifier';

/**
 * POST /api/v1/keys/verify: refused-token limit (429) → authenticate (401) → a method not served
 * (405) → body parsing (415/413/400) → validation (400) → the verifier, which decides authorisation
 * (403). Not under the per-principal limit of key operations: an API verifies on each of its own
 * requests, and each key's own rate limit is what the answer reports.
 */
export function verifyRouter(verifier: KeyVerifier, authenticator: Authenticator, limits: RateLimits): Router {
  const router = Router();
  router
    .route(PATHS.keysVerify)
    .post(...limits.bearerFailures, authenticate(authenticator), noStore, jsonBody, async function verifyKey(req: Request, res: Response) {
      const input = parseInput(verifyKeyBody, req.body, 'body');
      res.json(await verifier.verify(principalOf(res), input));
    })
    .all(methodNotAllowed(['POST']));
  return router;
}
