import { PATHS } from '../shared/paths';
import { BEARER, BODILESS_BEARER_ERRORS, errors, jsonBody, ok, parametersOf, type OpenApiOperation, type RoutesDescription } from '../http/openapi';
import { changeOwnPasswordBody, createUserBody, listUsersQuery, setUserPasswordBody, updateUserBody, usernameParams } from './users.schemas';
import { createdUserEnvelope, createdUserRecord, meEnvelope, meRecord, userEnvelope, userListEnvelope, userRecord } from './users.responses';

function operation(operationId: string, summary: string, rest: Omit<OpenApiOperation, 'operationId' | 'summary' | 'tags' | 'security'>): OpenApiOperation {
  return { operationId, summary, tags: ['Users'], security: BEARER, ...rest };
}

const USERNAME = { $ref: '#/components/parameters/Username' };
const ADMIN_ONLY = ' Admins only (role admin and the scope api-keys:admin); an admin API key may call it too.';
const BODY_ERRORS = ['BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'] as const;

function usernameParameter() {
  const [username] = parametersOf(usernameParams, 'path', { username: 'The user\'s username.' });
  return username!;
}

const NO_CONTENT = (description: string) => ({ 204: { description: `${description}; no body.` } });

/** The operations of usersRouter (PATHS.users) and meRouter (PATHS.me). */
export function describeUserRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.me]: {
        get: operation('v1_me_get', 'Who the caller is, and the token it called with (any bearer token)', {
          responses: { 200: ok('The caller.', 'MeEnvelope'), ...errors(...BODILESS_BEARER_ERRORS) },
        }),
      },
      [`${PATHS.me}/password`]: {
        put: operation('v1_me_password_put', 'Change one\'s own password (a user\'s token; 403 for an API key)', {
          requestBody: jsonBody(
            'ChangeOwnPasswordBody',
            'A wrong current_password is a 401 that counts as a failed login (login.failed, the failed-login limits). On success every other session of the user ends; the one the call came from stays.',
          ),
          responses: { ...NO_CONTENT('Changed'), ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests') },
        }),
      },
      [PATHS.users]: {
        get: operation('v1_users_get', `List users, ordered by username (byte order).${ADMIN_ONLY}`, {
          parameters: parametersOf(listUsersQuery, 'query', {
            limit: 'Page size, 1 to 1000; 1000 when omitted.',
            after: 'Return only users whose username sorts strictly after this one (byte order).',
          }),
          responses: { 200: ok('A page of users.', 'UserListEnvelope'), ...errors(...BODILESS_BEARER_ERRORS) },
        }),
        post: operation('v1_users_post', `Create a user.${ADMIN_ONLY}`, {
          requestBody: jsonBody('CreateUserBody', 'The new user; without `password` the service generates one and answers it once.'),
          responses: {
            201: ok('The user, with the generated password when none was given (shown only now).', 'CreatedUserEnvelope'),
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'Conflict', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
          },
        }),
      },
      [`${PATHS.users}/{username}`]: {
        parameters: [USERNAME],
        get: operation('v1_users_username_get', `Get a user.${ADMIN_ONLY}`, {
          responses: { 200: ok('The user.', 'UserEnvelope'), ...errors(...BODILESS_BEARER_ERRORS, 'NotFound') },
        }),
        put: operation('v1_users_username_put', `Replace a user's role and disabled.${ADMIN_ONLY}`, {
          requestBody: jsonBody(
            'UpdateUserBody',
            'Both fields; an omitted role becomes none, an omitted disabled false. A change of role, or disabling, ends every session of the user. The last enabled admin cannot be demoted or disabled (409).',
          ),
          responses: { 200: ok('The user as it is now.', 'UserEnvelope'), ...errors(...BODY_ERRORS, 'Conflict') },
        }),
        delete: operation('v1_users_username_delete', `Delete a user and end their sessions.${ADMIN_ONLY}`, {
          responses: { ...NO_CONTENT('Deleted'), ...errors(...BODILESS_BEARER_ERRORS, 'NotFound', 'Conflict') },
        }),
      },
      [`${PATHS.users}/{username}/password`]: {
        parameters: [USERNAME],
        put: operation('v1_users_username_password_put', `Set a user's password and end every session of the user.${ADMIN_ONLY}`, {
          requestBody: jsonBody('SetUserPasswordBody', 'The new password, under the password rules.'),
          responses: { ...NO_CONTENT('Set'), ...errors(...BODY_ERRORS) },
        }),
      },
    },
    requestSchemas: {
      CreateUserBody: createUserBody,
      UpdateUserBody: updateUserBody,
      SetUserPasswordBody: setUserPasswordBody,
      ChangeOwnPasswordBody: changeOwnPasswordBody,
    },
    responseSchemas: {
      UserRecord: userRecord,
      CreatedUserRecord: createdUserRecord,
      UserEnvelope: userEnvelope,
      CreatedUserEnvelope: createdUserEnvelope,
      UserListEnvelope: userListEnvelope,
      MeRecord: meRecord,
      MeEnvelope: meEnvelope,
    },
    parameters: { Username: usernameParameter() },
  };
}
