import { PATHS } from '../shared/paths';
import { errors, ok, type RoutesDescription } from '../http/openapi';
import { jwkSet } from './jwks.responses';

/** The route of jwksRouter: the public keys that verify our tokens. */
export function describeJwksRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.jwks]: {
        get: {
          operationId: 'well_known_jwks_get',
          summary: 'Public signing keys (JWK Set)',
          tags: ['Platform'],
          responses: { 200: ok('The JWK Set.', 'JwkSet'), ...errors() },
        },
      },
    },
    responseSchemas: { JwkSet: jwkSet },
  };
}
