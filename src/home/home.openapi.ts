import { PATHS } from '../shared/paths';
import { errors, ok, type RoutesDescription } from '../http/openapi';
import { homeIndex } from './home.responses';

const LINKS = 'Always sent: `Link: </api/v1/openapi.json>; rel="service-desc", </api-reference/>; rel="service-doc"` (RFC 8631; the second only while the API reference is served).';

/** The route of homeRouter: GET /, the front door. */
export function describeHomeRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.home]: {
        get: {
          operationId: 'home_get',
          summary: 'Where to start',
          tags: ['Platform'],
          responses: {
            200: ok(`While the admin console is off (CONSOLE_ENABLED=false): the links to the API reference, this document, discovery, the JWK Set and health. ${LINKS}`, 'HomeIndex'),
            302: { description: `While the admin console is on (the default): a redirect to it, \`Location: /console/\`. ${LINKS}` },
            ...errors(),
          },
        },
      },
    },
    responseSchemas: { HomeIndex: homeIndex },
  };
}
