import { hasUnstorableCharacters, UNSTORABLE_MESSAGE } from '../http/validate';
import { OAuthError } from '../shared/errors';

/**
 * The token endpoint's parameters (RFC 6749 §3.2): each sent at most once, a parameter without a value
 * treated as not sent, and unknown ones ignored. The body is a form (a repeated field comes as an
 * array from the parser) or a JSON object of strings.
 */
export type TokenParameters = Readonly<Record<string, string>>;

export function tokenParametersOf(body: unknown): TokenParameters {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_request', 'The body must be a form or a JSON object');
  const parameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `Parameter ${shown(name)} was sent more than once`);
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `Parameter ${shown(name)} must be a string`);
    // The same rule as every other route's input (validate.ts), as RFC 6749's invalid_request.
    if (hasUnstorableCharacters(value)) throw new OAuthError('invalid_request', `Parameter ${shown(name)} ${UNSTORABLE_MESSAGE}`);
    if (value !== '') parameters[name] = value;
  }
  return parameters;
}

/** The parameter, or invalid_request naming it. */
export function required(parameters: TokenParameters, name: string): string {
  const value = parameters[name];
  if (value === undefined) throw new OAuthError('invalid_request', `Parameter ${name} is required`);
  return value;
}

/** A client_id names a client: 1 to 64 visible ASCII characters (%x21-7E). */
const CLIENT_ID = /^[\x21-\x7e]{1,64}$/;

export function checkedClientId(clientId: string): string {
  if (!CLIENT_ID.test(clientId)) throw new OAuthError('invalid_request', 'client_id must be 1 to 64 visible ASCII characters');
  return clientId;
}

/** A scope (RFC 6749 §3.3): space-delimited words of visible ASCII but `"` and `\`. */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*$/;

export function checkedScope(scope: string | undefined): string | undefined {
  if (scope !== undefined && !SCOPE.test(scope)) throw new OAuthError('invalid_scope', 'scope must be space-separated scope names');
  return scope;
}

// A name in a message: error_description allows only visible ASCII without `"` and `\` (RFC 6749 §5.2).
const shown = (name: string) => name.slice(0, 64).replace(/[^\x20-\x7e]|["\\]/g, '?');
