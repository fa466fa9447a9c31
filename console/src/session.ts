// The signed-in session. The access token lives in this module's variables only, never in any browser
// storage or the URL. The refresh token is handed to the service's console session route right after
// sign-in, which keeps it in an HttpOnly cookie that no script can read, sent only to that route and
// only usable with the custom header below: a reload then resumes the session. Where the browser could
// not keep that cookie (plain HTTP away from loopback), the refresh token stays in memory instead, and
// a reload forgets the session.
import { ApiError, SessionEnded, errorOf, type Role } from './api';
import { CONSOLE_SESSION_HEADER } from '../../src/shared/console-session';

/** The OAuth client the console's tokens are issued to (a public client: no secret); CONSOLE_CLIENT_ID of src/config/server.env.ts. */
const CONSOLE_CLIENT_ID = 'console';

/** Renew this long before the access token expires, at most a third of its life. */
const RENEW_AHEAD_SECONDS = 30;
const SESSION_ROUTE = '/console/session';
/** One renewal at a time across this browser's tabs: they share the cookie, and a refresh token works once. */
const RENEWAL_LOCK = 'console-session-renewal';

export interface User {
  username: string;
  role: Role | null;
}

interface Tokens {
  access: string;
  /** Undefined when the cookie holds it. */
  refresh: string | undefined;
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
    body: new URLSearchParams({ ...fields, client_id: CONSOLE_CLIENT_ID }),
    cache: 'no-store',
  });
}

/** A call to the session route: same origin, the custom header, the cookie sent by the browser itself. */
function sessionRequest(method: 'PUT' | 'POST' | 'DELETE', body?: unknown): Promise<Response> {
  return fetch(SESSION_ROUTE, {
    method,
    headers: { [CONSOLE_SESSION_HEADER]: '1', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
}

/** The session route's answer: its envelope holds the access token. */
async function accessFrom(res: Response): Promise<TokenResponse> {
  return ((await res.json()) as { data: TokenResponse }).data;
}

function keep(response: TokenResponse, refresh: string | undefined): void {
  const renewIn = (response.expires_in - Math.min(RENEW_AHEAD_SECONDS, response.expires_in / 3)) * 1000;
  tokens = { access: response.access_token, refresh, renewAt: Date.now() + renewIn };
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
  // A cookie of the dead session is left alone: another tab may have signed in since and put its own
  // session there. The next resume finds a dead one refused, and the service clears it then.
  onEnded(message);
}

/**
 * The refresh token goes to the cookie (it is used up there, and the cookie gets its successor), so
 * no script holds a refresh token from here on. Where the cookie cannot be kept, the console keeps
 * the token itself, as before.
 */
async function handOver(response: TokenResponse & { refresh_token: string }): Promise<void> {
  if (!isSecureContext) return keep(response, response.refresh_token);
  const res = await sessionRequest('PUT', { refresh_token: response.refresh_token }).catch(() => undefined);
  if (res?.ok) return keep(await accessFrom(res), undefined);
  // Refused before anything was used (403: no cookie here): the sign-in's tokens stay good.
  if (res?.status === 403 || res === undefined) return keep(response, response.refresh_token);
  throw await errorOf(res);
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
  if (!response.refresh_token) throw new Error('the token response carries no refresh token');
  await handOver({ ...response, refresh_token: response.refresh_token });
  return { username, role: roleOf(tokens!.access) };
}

/**
 * After a reload: the session the cookie holds, if any (renewed through the session route), and who
 * is signed in (GET /api/v1/me). Undefined when there is none; `ended` when there was one that the
 * service no longer accepts.
 */
export async function resume(): Promise<User | 'ended' | undefined> {
  const res = await exclusively(() => sessionRequest('POST'));
  if (res.status === 204) return undefined;
  if (res.status === 401) return 'ended';
  if (!res.ok) throw await errorOf(res);
  keep(await accessFrom(res), undefined);
  const me = (await call<{ data: { name: string; roles: Role[] } }>('GET', '/api/v1/me')).data;
  return { username: me.name, role: me.roles[0] ?? null };
}

/** Runs `task` holding this browser's renewal lock, where the browser has Web Locks. */
function exclusively<T>(task: () => Promise<T>): Promise<T> {
  return navigator.locks ? navigator.locks.request(RENEWAL_LOCK, task) : task();
}

/** One renewal at a time: a refresh token works once, so a second concurrent use would end the session. */
function renew(): Promise<void> {
  const current = tokens;
  if (!current) return Promise.reject(new SessionEnded());
  renewing ??= (async () => {
    try {
      const res = await exclusively(() => (current.refresh ? tokenRequest({ grant_type: 'refresh_token', refresh_token: current.refresh }) : sessionRequest('POST')));
      if (res.status !== 200) throw await errorOf(res);
      if (current.refresh) {
        const response = (await res.json()) as TokenResponse;
        keep(response, response.refresh_token);
      } else {
        keep(await accessFrom(res), undefined);
      }
    } catch (err) {
      end(SESSION_ENDED);
      throw err instanceof SessionEnded ? err : new SessionEnded();
    } finally {
      renewing = undefined;
    }
  })();
  return renewing;
}

/** Ends the session at the service (the refresh token revoked, the cookie cleared) and forgets the tokens. */
export async function signOut(): Promise<void> {
  const current = tokens;
  forget();
  if (!current) return;
  const revoked = current.refresh
    ? fetch('/oauth2/revoke', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: current.refresh, token_type_hint: 'refresh_token' }),
        cache: 'no-store',
      })
    : sessionRequest('DELETE');
  await revoked
    .then((res) => res.arrayBuffer())
    // Signed out here whatever the answer: the tokens are already forgotten.
    .catch(() => undefined);
}

/**
 * A call to the API as the signed-in user. 401 ends the session (the API no longer knows it), unless
 * `ownRefusal` says the 401 is the call's own answer (a wrong current password); any other refusal
 * is an ApiError for the page to show.
 */
export async function call<T>(method: string, path: string, body?: unknown, options: { ownRefusal?: boolean } = {}): Promise<T> {
  if (!tokens) throw new SessionEnded();
  if (Date.now() >= tokens.renewAt) await renew();
  const access = tokens.access;
  const res = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${access}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  if (res.status === 401 && !options.ownRefusal) {
    end(SESSION_ENDED);
    throw new SessionEnded();
  }
  if (!res.ok) throw await errorOf(res);
  return (res.status === 204 ? undefined : await res.json()) as T;
}
