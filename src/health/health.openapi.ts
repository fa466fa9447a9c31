import { PATHS } from '../shared/paths';
import { errors, ok, type RoutesDescription } from '../http/openapi';
import { healthStatus, readinessStatus } from './health.responses';

/** The routes of healthRouter: liveness and readiness. */
export function describeHealthRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.health]: {
        get: { operationId: 'healthz_get', summary: 'Liveness', tags: ['Platform'], responses: { 200: ok('The process answers.', 'HealthStatus'), ...errors() } },
      },
      [PATHS.readiness]: {
        get: {
          operationId: 'readyz_get',
          summary: 'Readiness',
          tags: ['Platform'],
          responses: {
            200: ok('The database answers. With REDIS_URL, `redis` says whether Redis does: when down, rate limits pass every request, and the service stays ready.', 'ReadinessStatus'),
            ...errors('ServiceUnavailable'),
          },
        },
      },
    },
    responseSchemas: { HealthStatus: healthStatus, ReadinessStatus: readinessStatus },
  };
}
