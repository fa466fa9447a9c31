import { Router } from 'express';
import { PATHS } from '../shared/paths';
import type { Database } from '../db/database';
import { AppError } from '../shared/errors';
import { methodNotAllowed } from '../http/error-handler';

/**
 * Liveness (the process answers) and readiness (the database answers). No token needed. `redisUp`,
 * given when rate-limit counters live in Redis, is reported by /readyz but never fails it: without
 * Redis the limits pass requests, and taking the instance out of rotation would be worse.
 */
export function healthRouter(db: Database, redisUp?: () => Promise<boolean>): Router {
  const router = Router();
  router
    .route(PATHS.health)
    .get(function liveness(_req, res) {
      res.json({ status: 'ok' });
    })
    .all(methodNotAllowed(['GET']));
  router
    .route(PATHS.readiness)
    .get(async function readiness(_req, res) {
      try {
        await db.ping();
      } catch (err) {
        throw new AppError('ServiceUnavailable', 'Database is not reachable', { cause: err });
      }
      res.json(redisUp ? { status: 'ok', redis: (await redisUp()) ? 'up' : 'down' } : { status: 'ok' });
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
