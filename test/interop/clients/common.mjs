// Helpers shared by the client scripts. Each script runs one scenario (argv[2]) against the service
// named by ISSUER and prints one JSON object on its last line; test/interop/*.test.ts asserts on it.
// An unexpected error exits 1 with its stack; a refusal the scenario expects is caught and printed.
import { Buffer } from 'node:buffer';
import process from 'node:process';

/** A required environment variable. */
export function env(name) {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

/** A JWT's payload, unverified: the scripts report claims, never raw tokens. */
export function claimsOf(jwt) {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));
}

/** A JWT's protected header, unverified. */
export function headerOf(jwt) {
  return JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString('utf8'));
}

/** What a token endpoint response held, without the raw tokens. */
export function described(tokens) {
  return {
    fields: Object.keys(tokens).sort(),
    token_type: tokens.token_type,
    scope: tokens.scope,
    expires_in: tokens.expires_in,
    session_state: tokens['session-state'],
    access: tokens.access_token ? claimsOf(tokens.access_token) : undefined,
    refresh_token: tokens.refresh_token !== undefined,
    id_token: tokens.id_token ? claimsOf(tokens.id_token) : null,
  };
}

/** The error a call must end with, as the library reports it; throws if the call succeeded. */
export async function refusal(call) {
  try {
    await call();
  } catch (err) {
    return {
      name: err?.name,
      code: err?.code,
      message: err?.message,
      error: err?.error ?? err?.cause?.error,
      status: err?.status ?? err?.response?.status,
      // WWWAuthenticateChallengeError: the challenges the server sent (a 401 after Basic says Basic).
      challenges: Array.isArray(err?.cause) ? err.cause.map((challenge) => challenge.scheme) : undefined,
    };
  }
  throw new Error('expected a refusal, but the call succeeded');
}

/** Whichever way a call ends: { ok: true, value } or { ok: false, ...the refusal }. */
export async function outcome(call) {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    return { ok: false, ...(await refusal(() => Promise.reject(err))) };
  }
}

/** Runs the scenario named by argv[2] and prints its result as JSON. */
export async function run(scenarios) {
  const name = process.argv[2];
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(', ')}`);
  try {
    const result = await scenario();
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (err) {
    process.stderr.write(`${name}: ${err?.stack ?? err}\n${err?.cause ? `cause: ${JSON.stringify(err.cause)}\n` : ''}`);
    process.exitCode = 1;
  }
}
