import { PATHS } from '../shared/paths';
import { errors, ok, type RoutesDescription } from '../http/openapi';
import { healthStatus } from './health.responses';

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
          responses: { 200: ok('The database answers.', 'HealthStatus'), ...errors('ServiceUnavailable') },
        },
      },
    },
    responseSchemas: { HealthStatus: healthStatus },
  };
}
