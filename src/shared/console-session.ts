// What the console (console/src) and its session route (src/console-session) agree on. (The
// console's client id is CONSOLE_CLIENT_ID of src/config/server.env.ts: configuration lists it among
// the public clients.)

/**
 * The header every call to the session route must carry. A page of another origin can send it only
 * after a CORS preflight, which this service never grants; a form or a link cannot send it at all.
 */
export const CONSOLE_SESSION_HEADER = 'X-Console-Session';
