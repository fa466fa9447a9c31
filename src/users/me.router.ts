import { Router, type NextFunction, type Request, type Response } from 'express';
import { authenticate, principalOf, type Authenticator } from '../http/authenticate';
import { jsonBody } from '../http/body-parsers';
import type { RateLimits } from '../http/rate-limits';
import { methodNotAllowed } from '../http/error-handler';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { envelope } from '../shared/envelope';
import { contextOf } from '../shared/audit-context';
import { forbidden } from '../shared/errors';
import { presentMe } from './users.presenter';
import { changeOwnPasswordBody } from './users.schemas';
import type { OwnPasswords } from './own-password';

/** The current password is checked as a login's is: the failed-login limits count it against this user and address. */
function countAsPasswordAttempt(_req: Request, res: Response, next: NextFunction): void {
  const principal = principalOf(res);
  if (principal.type === 'user') res.locals.passwordAttemptBy = principal.name;
  next();
}

/**
 * /api/v1/me: the caller (any bearer token), and a user's own password. The usual order: refused-token
 * limit (429), authenticate (401), per-principal limit (429), 405, body (415/413/400), validation
 * (400), then for the password the failed-login limits (429), a user's token (403) and the current
 * password (401).
 */
export function meRouter(passwords: OwnPasswords, authenticator: Authenticator, limits: RateLimits): Router {
  const router = Router();
  router.use(...limits.bearerFailures, authenticate(authenticator), ...limits.keyOperations);

  router
    .route('/')
    .get(jsonBody, function getMe(_req: Request, res: Response) {
      res.json(envelope(200, presentMe(principalOf(res))));
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/password')
    .put(jsonBody, countAsPasswordAttempt, ...limits.passwordFailures, async function changeOwnPassword(req: Request, res: Response) {
      const { current_password: current, new_password: next } = parseInput(changeOwnPasswordBody, req.body, 'body');
      const principal = principalOf(res);
      if (principal.type !== 'user') throw forbidden('Only a user has a password: an API key changes its secret by regen');
      const who = { id: principal.id, username: principal.name, sessionId: principal.sessionId };
      await passwords.change(who, current, next, contextOf(principal, originOf(req)));
      res.status(204).end();
    })
    .all(methodNotAllowed(['PUT']));

  return router;
}
