import { PATHS } from '../shared/paths';
import { BEARER, errors, type RoutesDescription } from '../http/openapi';

/**
 * GET /metrics, to be listed only where it is served: METRICS_ENABLED=true and METRICS_PORT unset;
 * `guarded` in production, where it takes an admin's bearer token.
 */
export function describeMetricsRoutes(guarded: boolean): RoutesDescription {
  return {
    paths: {
      [PATHS.metrics]: {
        get: {
          operationId: 'metrics_get',
          summary: 'Prometheus metrics (present when METRICS_ENABLED=true and METRICS_PORT is unset)',
          tags: ['Platform'],
          ...(guarded && { security: BEARER, description: 'In production on the main port: a bearer token with api-keys:admin.' }),
          responses: {
            200: {
              description: 'Every metric in the Prometheus text exposition format (Content-Type: text/plain; version=0.0.4; charset=utf-8).',
              content: { 'text/plain': { schema: { type: 'string' } } },
            },
            ...(guarded ? errors('Unauthorized', 'Forbidden', 'TooManyRequests') : errors()),
          },
        },
      },
    },
  };
}
