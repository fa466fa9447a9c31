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
    if (value.includes('\u0000') || LONE_SURROGATE.test(value)) throw new OAuthError('invalid_request', `Parameter ${shown(name)} must not contain NUL characters or unpaired surrogates`);
    if (value !== '') parameters[name] = value;
  }
  return parameters;
}

/** No parameter may hold NUL (PostgreSQL text refuses it) or an unpaired UTF-16 surrogate (contract, "Bad input stays 400"). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

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
