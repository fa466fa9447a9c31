/** What a test expects of an error answer: the contract's uniform body, and the RFC 6750 challenges of a 401. */
import type { ErrorName } from '../../src/shared/errors';

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
