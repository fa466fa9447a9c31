import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from '../../integration/process/server-process';

/** The interop tests' own folder: the client and resource-server scripts live under it. */
export const INTEROP_DIR = path.resolve(__dirname, '..');

export interface InteropService {
  /** `http://127.0.0.1:<port>`: the ISSUER the service runs with, and the URL clients discover from. */
  issuer: string;
  server: ServerProcess;
  /** The bootstrap admin: the user of the password grant. */
  admin: { username: string; password: string };
  /** An API key created through POST /api/v1/api-keys by the admin; its appname is the OAuth client_id. */
  createApiKey: (appname: string, role: 'viewer' | 'editor' | 'admin' | null) => Promise<{ appname: string; appkey: string }>;
  cleanup: () => Promise<void>;
}

/**
 * The real service as a child process whose ISSUER is its own loopback URL. startServerProcess
 * chooses the port (it sets PORT after the caller's env), so ISSUER cannot be passed in advance: a
 * one-line preload (issuer-from-port.cjs) sets it from PORT before the configuration is read.
 */
export async function startInteropService(env: Record<string, string> = {}): Promise<InteropService> {
  const admin = { username: 'interop-admin', password: `Interop-${randomBytes(12).toString('hex')}` };
  const preload = path.join(__dirname, 'issuer-from-port.cjs');
  const server = await startServerProcess({
    NODE_OPTIONS: `--require ${JSON.stringify(preload)}`,
    BOOTSTRAP_ADMIN_USERNAME: admin.username,
    BOOTSTRAP_ADMIN_PASSWORD: admin.password,
    ...env,
  });
  const issuer = server.baseUrl;

  let adminToken: string | undefined;
  async function adminAccessToken(): Promise<string> {
    if (adminToken) return adminToken;
    const res = await fetch(`${issuer}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', ...admin }),
    });
    const body = (await res.json()) as { access_token?: string };
    if (res.status !== 200 || !body.access_token) throw new Error(`admin login failed: ${res.status} ${JSON.stringify(body)}`);
    return (adminToken = body.access_token);
  }

  return {
    issuer,
    server,
    admin,
    async createApiKey(appname, role) {
      const res = await fetch(`${issuer}/api/v1/api-keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${await adminAccessToken()}` },
        body: JSON.stringify({ appname, description: 'interop test client', roles: role ? [role] : [] }),
      });
      const body = (await res.json()) as { data?: { appname: string; appkey: string } };
      if (res.status !== 201 || !body.data) throw new Error(`create key failed: ${res.status} ${JSON.stringify(body)}`);
      return { appname: body.data.appname, appkey: body.data.appkey };
    },
    cleanup: () => server.cleanup(),
  };
}

export interface ScriptRun<T> {
  /** The JSON object the script printed last on stdout. */
  result: T;
  stderr: string;
}

/**
 * Runs a client script (`node x.mjs <scenario>`, or `python3 x.py <scenario>`) with exactly the given
 * environment besides PATH and HOME, and parses the JSON object on its last line of output. A non-zero
 * exit is an error carrying everything it printed.
 */
export function runScript<T = Record<string, unknown>>(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<ScriptRun<T>> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      [...args],
      { cwd: INTEROP_DIR, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${command} ${args.join(' ')} failed (${err.message}):\n${stdout}\n${stderr}`));
        const last = stdout.trim().split('\n').pop() ?? '';
        try {
          resolve({ result: JSON.parse(last) as T, stderr });
        } catch {
          reject(new Error(`${command} ${args.join(' ')} printed no JSON on its last line:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

/** A JWT's payload, unverified (the scripts print claims for the tests to read). */
export function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}
