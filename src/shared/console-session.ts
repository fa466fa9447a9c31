/**
 * What the console (console/src) and its session route (src/console-session) agree on. The console is
 * a public OAuth client of its own, so its refresh tokens are bound to this client id, and only those
 * are taken by the session route.
 */
export const CONSOLE_CLIENT_ID = 'console';

/**
 * The header every call to the session route must carry. A page of another origin can send it only
 * after a CORS preflight, which this service never grants; a form or a link cannot send it at all.
 */
export const CONSOLE_SESSION_HEADER = 'X-Console-Session';
