// The signed-in session: its tokens live in this module's variables only, never in any browser
// storage, a cookie or the URL, so closing or reloading the tab forgets them.
import { ApiError, SessionEnded, errorOf, type Role } from './api';

/** The OAuth client the console's tokens are issued to (a public client: no secret). */
const CLIENT_ID = 'console';
/** Renew this long before the access token expires, at most a third of its life. */
const RENEW_AHEAD_SECONDS = 30;

export interface User {
  username: string;
  role: Role | null;
}

interface Tokens {
  access: string;
  refresh: string;
  /** Epoch milliseconds from which a call renews the tokens first (the timer may fire late in a background tab). */
  renewAt: number;
}

interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
}

let tokens: Tokens | undefined;
let renewTimer: ReturnType<typeof setTimeout> | undefined;
let renewing: Promise<void> | undefined;
let onEnded: (message: string) => void = () => {};

export const SESSION_ENDED = 'Your session ended. Sign in again.';

/** Called when the session ends without the user signing out: expired, revoked, or refused. */
export function whenSessionEnds(listener: (message: string) => void): void {
  onEnded = listener;
}

/** The role the access token states (its `roles` claim); the API still decides every call. */
function roleOf(accessToken: string): Role | null {
  try {
    const payload = accessToken.split('.')[1] ?? '';
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const roles = (JSON.parse(json) as { roles?: unknown }).roles;
    const role = Array.isArray(roles) ? roles[0] : undefined;
    return role === 'viewer' || role === 'editor' || role === 'admin' ? role : null;
  } catch {
    return null;
  }
}

function tokenRequest(fields: Record<string, string>): Promise<Response> {
  return fetch('/oauth2/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, client_id: CLIENT_ID }),
    cache: 'no-store',
  });
}

function keep(response: TokenResponse): void {
  if (!response.refresh_token) throw new Error('the token response carries no refresh token');
  const renewIn = (response.expires_in - Math.min(RENEW_AHEAD_SECONDS, response.expires_in / 3)) * 1000;
  tokens = { access: response.access_token, refresh: response.refresh_token, renewAt: Date.now() + renewIn };
  clearTimeout(renewTimer);
  renewTimer = setTimeout(() => void renew().catch(() => undefined), renewIn);
}

function forget(): void {
  clearTimeout(renewTimer);
  renewTimer = undefined;
  tokens = undefined;
  renewing = undefined;
}

/** Ends the session on the console's side and sends the user back to sign-in with the message. */
function end(message: string): void {
  if (!tokens) return;
  forget();
  onEnded(message);
}

/** Password grant. A wrong password is an ApiError whose message says so. */
export async function signIn(username: string, password: string): Promise<User> {
  const res = await tokenRequest({ grant_type: 'password', username, password });
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 400 || res.status === 401) throw new ApiError(res.status, 'Wrong username or password.');
    throw err;
  }
  const response = (await res.json()) as TokenResponse;
  keep(response);
  return { username, role: roleOf(response.access_token) };
}

/** One renewal at a time: a refresh token works once, so a second concurrent use would end the session. */
function renew(): Promise<void> {
  const current = tokens;
  if (!current) return Promise.reject(new SessionEnded());
  renewing ??= (async () => {
    try {
      const res = await tokenRequest({ grant_type: 'refresh_token', refresh_token: current.refresh });
      if (!res.ok) throw await errorOf(res);
      keep((await res.json()) as TokenResponse);
    } catch (err) {
      end(SESSION_ENDED);
      throw err instanceof SessionEnded ? err : new SessionEnded();
    } finally {
      renewing = undefined;
    }
  })();
  return renewing;
}

/** Revokes the refresh token (and with it the session) and forgets both tokens. */
export async function signOut(): Promise<void> {
  const current = tokens;
  forget();
  if (!current) return;
  await fetch('/oauth2/revoke', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: current.refresh, token_type_hint: 'refresh_token' }),
    cache: 'no-store',
  })
    .then((res) => res.arrayBuffer())
    // Signed out here whatever the answer: the tokens are already forgotten.
    .catch(() => undefined);
}

/**
 * A call to the API as the signed-in user. 401 ends the session (the API no longer knows it);
 * any other refusal is an ApiError for the page to show.
 */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  if (!tokens) throw new SessionEnded();
  if (Date.now() >= tokens.renewAt) await renew();
  const access = tokens.access;
  const res = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${access}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  if (res.status === 401) {
    end(SESSION_ENDED);
    throw new SessionEnded();
  }
  if (!res.ok) throw await errorOf(res);
  return (res.status === 204 ? undefined : await res.json()) as T;
}
