/** What a test expects of an error answer: the contract's uniform body, and the RFC 6750 challenges of a 401. */
import type { ErrorName, OAuthErrorCode } from '../../src/shared/errors';

/** A supertest response, or anything else holding the same three parts (a fetch or raw http answer, once read). */
export interface ErrorResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * An error answer as the contract has it: this HTTP status, a JSON body of exactly {status, name,
 * message} with the same status, and a message that says something. `message`, when given: a part
 * the message must contain (a string) or a pattern it must match (anchor it to pin the whole text).
 */
export function expectError(res: ErrorResponse, status: number, name: ErrorName, message?: string | RegExp): void {
  const expectedMessage =
    message === undefined ? expect.stringMatching(/\S/) : typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message);
  expect({ status: res.status, type: res.headers['content-type'], body: res.body }).toEqual({
    status,
    type: expect.stringMatching(/^application\/json/),
    body: { status, name, message: expectedMessage },
  });
}

/** 401 for a request that presented no bearer token: the bare `WWW-Authenticate: Bearer` challenge. */
export function expectMissingToken(res: ErrorResponse): void {
  expectError(res, 401, 'Unauthorized');
  expect(res.headers['www-authenticate']).toBe('Bearer');
}

/** 401 for a bearer token that was presented and refused: RFC 6750's error="invalid_token" challenge. */
export function expectInvalidToken(res: ErrorResponse): void {
  expectError(res, 401, 'Unauthorized');
  expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
}

/**
 * An error of the OAuth 2.0 endpoints (RFC 6749 §5.2): the uniform body plus `error` and
 * `error_description` (the message again), and nothing else; 401 for invalid_client, else 400. A
 * `WWW-Authenticate: Basic` challenge exactly when `basicChallenge` (the client used Basic), never a
 * Bearer one.
 */
export function expectOAuthError(
  res: ErrorResponse,
  status: 400 | 401,
  error: OAuthErrorCode,
  options: { basicChallenge?: boolean; message?: string | RegExp } = {},
): void {
  const { message } = options;
  const expectedMessage =
    message === undefined ? expect.stringMatching(/\S/) : typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message);
  const body = res.body as { message?: unknown };
  expect({ status: res.status, type: res.headers['content-type'], body: res.body, challenge: res.headers['www-authenticate'] }).toEqual({
    status,
    type: expect.stringMatching(/^application\/json/),
    body: { status, name: status === 401 ? 'Unauthorized' : 'BadRequest', message: expectedMessage, error, error_description: body.message },
    challenge: options.basicChallenge ? expect.stringMatching(/^Basic\b/) : undefined,
  });
}
