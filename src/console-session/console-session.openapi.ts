import { PATHS } from '../shared/paths';
import { CONSOLE_SESSION_HEADER } from '../shared/console-session';
import { errors, jsonBody, ok, type OpenApiOperation, type RoutesDescription } from '../http/openapi';
import { handOverBody } from './console-session.schemas';
import { consoleAccess, consoleAccessEnvelope } from './console-session.responses';

const COOKIE = [{ consoleSessionCookie: [] }];
const HEADER = {
  name: CONSOLE_SESSION_HEADER,
  in: 'header',
  required: true,
  description: 'Must be 1. Without it, or from another origin (Origin, Sec-Fetch-Site), the answer is 403 and the cookie is not used.',
  schema: { type: 'string', const: '1' },
};

function operation(operationId: string, summary: string, rest: Omit<OpenApiOperation, 'operationId' | 'summary' | 'tags'>): OpenApiOperation {
  return { operationId, summary, tags: ['Console'], ...rest };
}

/** consoleSessionRouter's three operations; 404 while the console is off (CONSOLE_ENABLED=false). */
export function describeConsoleSessionRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.consoleSession]: {
        parameters: [HEADER],
        put: operation('console_session_put', 'Hand the refresh token of a console sign-in to the cookie (it is used up and rotated)', {
          requestBody: jsonBody('ConsoleSessionHandOverBody', 'The refresh token of a password grant with client_id console.'),
          responses: {
            200: ok('An access token for the page; Set-Cookie carries the rotated refresh token.', 'ConsoleAccessEnvelope'),
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
          },
        }),
        post: operation('console_session_post', 'Renew: redeem the cookie\'s refresh token (one use; a reused one revokes the session)', {
          security: COOKIE,
          responses: {
            200: ok('A new access token; Set-Cookie carries the rotated refresh token.', 'ConsoleAccessEnvelope'),
            204: { description: 'No session cookie: nothing to renew.' },
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
          },
        }),
        delete: operation('console_session_delete', 'Sign out: revoke the cookie\'s session and clear the cookie', {
          security: COOKIE,
          responses: { 204: { description: 'Signed out (also when there was no session); no body.' }, ...errors('BadRequest', 'Forbidden', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests') },
        }),
      },
    },
    requestSchemas: { ConsoleSessionHandOverBody: handOverBody },
    responseSchemas: { ConsoleAccess: consoleAccess, ConsoleAccessEnvelope: consoleAccessEnvelope },
  };
}
