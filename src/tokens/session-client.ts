import type { PrincipalType } from '../shared/principals';

/** What decides a session's client: the client it was opened for, if any, and its principal. */
export interface SessionClientFacts {
  client_id: string | null;
  type: PrincipalType;
  name: string;
}

/**
 * The client a session's tokens are for: the one named when it was opened; a session opened without
 * one (the service's own routes) belongs to its API key, or for a user to DEFAULT_CLIENT_ID.
 */
export function sessionClientId(session: SessionClientFacts, defaultClientId: string): string {
  return session.client_id ?? (session.type === 'api_key' ? session.name : defaultClientId);
}
