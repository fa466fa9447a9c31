import { Router, type Request, type Response } from 'express';
import { authenticate, principalOf, type Authenticator } from '../http/authenticate';
import { jsonBody } from '../http/body-parsers';
import type { RateLimits } from '../http/rate-limits';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { envelope } from '../shared/envelope';
import { contextOf } from '../shared/audit-context';
import { forbidden } from '../shared/errors';
import { allows } from '../shared/principals';
import { presentUser } from './users.presenter';
import { createUserBody, listUsersQuery, setUserPasswordBody, updateUserBody, usernameParams } from './users.schemas';
import type { UsersService } from './users.service';

/** Admins only (the role and the token's scope both): users hold the keys to everything else. */
function administrator(res: Response) {
  const principal = principalOf(res);
  if (!allows.administer(principal)) throw forbidden('Users are managed by admins only');
  return principal;
}

/** Who acts and from where, for the audit trail. */
const contextFor = (req: Request, res: Response) => contextOf(administrator(res), originOf(req));

/**
 * /api/v1/users, admins only. Every route: the per-address limit of refused tokens (429) →
 * authenticate (401) → the per-principal limit (429) → a method not served (405) → body parsing
 * (415/413/400) → validation (400) → admin (403) → the service (404, 409).
 */
export function usersRouter(service: UsersService, authenticator: Authenticator, limits: RateLimits): Router {
  const router = Router();
  // Spread: router.use() would take a leading empty array (limits off) for a path.
  router.use(...limits.bearerFailures, authenticate(authenticator), ...limits.keyOperations);

  router
    .route('/')
    .get(jsonBody, async function listUsers(req: Request, res: Response) {
      const page = parseInput(listUsersQuery, req.query, 'query');
      administrator(res);
      res.json(envelope(200, (await service.list(page)).map(presentUser)));
    })
    // The answer may carry a generated password: no cache may keep it.
    .post(noStore, jsonBody, async function createUser(req: Request, res: Response) {
      const input = parseInput(createUserBody, req.body, 'body');
      const { user, generatedPassword } = await service.create(input, contextFor(req, res));
      res.status(201).json(envelope(201, { ...presentUser(user), ...(generatedPassword !== undefined && { password: generatedPassword }) }));
    })
    .all(methodNotAllowed(['GET', 'POST']));

  router
    .route('/:username')
    .get(jsonBody, async function getUser(req: Request, res: Response) {
      const { username } = parseInput(usernameParams, req.params, 'params');
      administrator(res);
      res.json(envelope(200, presentUser(await service.get(username))));
    })
    .put(jsonBody, async function updateUser(req: Request, res: Response) {
      const { username } = parseInput(usernameParams, req.params, 'params');
      const input = parseInput(updateUserBody, req.body, 'body');
      res.json(envelope(200, presentUser(await service.update(username, input, contextFor(req, res)))));
    })
    .delete(jsonBody, async function deleteUser(req: Request, res: Response) {
      const { username } = parseInput(usernameParams, req.params, 'params');
      await service.delete(username, contextFor(req, res));
      res.status(204).end();
    })
    .all(methodNotAllowed(['GET', 'PUT', 'DELETE']));

  router
    .route('/:username/password')
    .put(jsonBody, async function resetUserPassword(req: Request, res: Response) {
      const { username } = parseInput(usernameParams, req.params, 'params');
      const { password } = parseInput(setUserPasswordBody, req.body, 'body');
      await service.setPassword(username, password, contextFor(req, res));
      res.status(204).end();
    })
    .all(methodNotAllowed(['PUT']));

  return router;
}
