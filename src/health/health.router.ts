import { Router } from 'express';
import type { Database } from '../db/database';
import { AppError } from '../errors';

/** Liveness (the process answers) and readiness (the database answers). No token needed. */
export function healthRouter(db: Database): Router {
  const router = Router();
  router.get('/healthz', function liveness(_req, res) {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async function readiness(_req, res) {
    try {
      await db.ping();
    } catch (err) {
      throw new AppError('ServiceUnavailable', 'Database is not reachable', { cause: err });
    }
    res.json({ status: 'ok' });
  });
  return router;
}
