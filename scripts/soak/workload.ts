/**
 * The mixed workload. Every worker runs one request at a time until the deadline and owns its
 * sessions, so each refresh token is presented exactly once; the shared pool keys are never
 * regenerated or deleted during the load, so no session is revoked under a worker's feet.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { HttpClient, parseJson, type HttpRequest } from './http';
import type { Kind, Recorder } from './stats';

export interface PoolKey {
  appname: string;
  appkey: string;
  roles: string[];
}

interface TokenResponse {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  refresh_expires_in?: number;
}

interface Session {
  access: string;
  refresh: string;
  /** Date.now() after which the access token is renewed before use. */
  renewAt: number;
  /** Date.now() after which the refresh token (or the session) is too close to its end to be used: a new session is opened instead. */
  refreshableUntil: number;
}

/** Share of each operation in a worker's loop; a temporary-key cycle is 2 or 3 requests. */
export const MIX: ReadonlyArray<readonly [Operation, number]> = [
  ['get', 0.45],
  ['list', 0.05],
  ['exchange', 0.2],
  ['refresh', 0.15],
  ['update', 0.08],
  ['temporary-key', 0.02],
  ['login', 0.05],
];
type Operation = 'get' | 'list' | 'exchange' | 'refresh' | 'update' | 'temporary-key' | 'login';

const EXPECTED: Record<Kind, number> = { get: 200, list: 200, exchange: 200, refresh: 200, login: 200, update: 200, create: 201, regen: 200, delete: 204 };
const SESSIONS_PER_WORKER = 2;

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

/** HS256 request token for an API key: iss = appname, iat, exp, unique jti (what the README's walkthrough signs). */
export function requestToken(appname: string, appkey: string): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: appname, iat: now, exp: now + 60, jti: randomUUID() })}`;
  return `${unsigned}.${createHmac('sha256', appkey).update(unsigned).digest('base64url')}`;
}

function toSession(t: TokenResponse): Session {
  // Renew a little before expiry (ACCESS_TOKEN_TTL may be short on the instance under test). An
  // access token dies with its session, whose end the refresh token's lifetime never passes.
  const margin = Math.min(30, t.expires_in / 4);
  const refreshLeft = t.refresh_expires_in ?? Infinity;
  const now = Date.now();
  return {
    access: t.access_token,
    refresh: t.refresh_token,
    renewAt: now + (Math.min(t.expires_in, refreshLeft) - margin) * 1000,
    refreshableUntil: now + (refreshLeft - margin) * 1000,
  };
}

export class SetupError extends Error {}

export class Workload {
  /** The admin's session, shared by all workers for key writes; renewed by password logins. */
  private admin: Session | undefined;
  private writes = 0;

  constructor(
    private readonly http: HttpClient,
    private readonly recorder: Recorder,
    private readonly runId: string,
    private readonly credentials: { username: string; password: string },
    readonly keys: PoolKey[] = [],
  ) {}

  /** Setup calls are not recorded: they must all succeed or the run stops. */
  private async must<T>(req: HttpRequest, expected: number, what: string): Promise<T> {
    const res = await this.http.request(req);
    if (res.status !== expected) {
      throw new SetupError(`${what}: expected ${expected}, got ${res.error ?? res.status} ${res.body.slice(0, 300)}`);
    }
    return parseJson<T>(res.body) as T;
  }

  async setup(keyCount: number): Promise<void> {
    const t = await this.must<TokenResponse>(
      { method: 'POST', path: '/api/auth/bearer/token', form: { username: this.credentials.username, password: this.credentials.password } },
      200,
      'admin login',
    );
    this.admin = toSession(t);
    const names = Array.from({ length: keyCount }, (_, i) => `soak-${this.runId}-k${String(i).padStart(3, '0')}`);
    // Pool keys are viewers and editors: both may read keys, neither is refused anything the load does.
    await inBatches(names, 8, async (appname, i) => {
      const roles = [i % 2 === 0 ? 'viewer' : 'editor'];
      const created = await this.must<{ data: { appkey: string } }>(
        { method: 'POST', path: '/api/v1/api-keys', bearer: this.admin?.access, json: { appname, description: 'soak pool key', roles } },
        201,
        `create ${appname}`,
      );
      this.keys.push({ appname, appkey: created.data.appkey, roles });
    });
    this.keys.sort((a, b) => (a.appname < b.appname ? -1 : 1));
  }

  /** Deletes the pool keys (an instance we did not start should be left as we found it). */
  async cleanup(): Promise<number> {
    await this.ensureAdmin(false);
    let failed = 0;
    await inBatches(this.keys, 8, async (k) => {
      const res = await this.http.request({ method: 'DELETE', path: `/api/v1/api-keys/${k.appname}`, bearer: this.admin?.access });
      if (res.status !== 204) failed++;
    });
    return failed;
  }

  async newWorkerSessions(): Promise<Session[]> {
    const sessions: Session[] = [];
    for (let i = 0; i < SESSIONS_PER_WORKER; i++) {
      const k = pick(this.keys);
      const t = await this.must<TokenResponse>(
        { method: 'POST', path: '/api/v1/auth/token', json: { jwt: requestToken(k.appname, k.appkey) } },
        200,
        `token exchange for ${k.appname}`,
      );
      sessions.push(toSession(t));
    }
    return sessions;
  }

  private async call(kind: Kind, req: HttpRequest): Promise<{ ok: boolean; body: string }> {
    const res = await this.http.request(req);
    const ok = this.recorder.record(kind, EXPECTED[kind], res.status, res.ms, res.body, res.error);
    return { ok, body: res.body };
  }

  /** Refreshes the session, or, when it is near its end (SESSION_MAX_TTL), opens a new one in its place. */
  private async refresh(session: Session): Promise<void> {
    if (Date.now() >= session.refreshableUntil) return this.exchange(session);
    const { ok, body } = await this.call('refresh', { method: 'POST', path: '/api/auth/bearer/refresh', form: { refresh_token: session.refresh } });
    const t = ok ? parseJson<TokenResponse>(body) : undefined;
    if (t) Object.assign(session, toSession(t));
  }

  /** A token exchange with a random pool key; its session replaces `session`'s (the old one is left to expire). */
  private async exchange(session: Session): Promise<void> {
    const k = pick(this.keys);
    const { ok, body } = await this.call('exchange', { method: 'POST', path: '/api/v1/auth/token', json: { jwt: requestToken(k.appname, k.appkey) } });
    const t = ok ? parseJson<TokenResponse>(body) : undefined;
    if (t) Object.assign(session, toSession(t));
  }

  private async login(): Promise<void> {
    const { ok, body } = await this.call('login', {
      method: 'POST',
      path: '/api/auth/bearer/token',
      form: { username: this.credentials.username, password: this.credentials.password },
    });
    const t = ok ? parseJson<TokenResponse>(body) : undefined;
    if (t) this.admin = toSession(t);
  }

  private async ensureAdmin(record = true): Promise<void> {
    if (this.admin && Date.now() < this.admin.renewAt) return;
    if (record) return this.login();
    const t = await this.must<TokenResponse>(
      { method: 'POST', path: '/api/auth/bearer/token', form: { username: this.credentials.username, password: this.credentials.password } },
      200,
      'admin login',
    );
    this.admin = toSession(t);
  }

  private async keySession(sessions: Session[]): Promise<Session> {
    const s = pick(sessions);
    if (Date.now() >= s.renewAt) await this.refresh(s);
    return s;
  }

  /** One worker: runs operations drawn from MIX until `running()` says stop. */
  async worker(id: number, running: () => boolean): Promise<void> {
    const sessions = await this.newWorkerSessions();
    let replace = 0;
    let temporary = 0;
    while (running()) {
      let r = Math.random();
      let op: Operation = 'get';
      for (const [name, share] of MIX) {
        op = name;
        if ((r -= share) < 0) break;
      }
      switch (op) {
        case 'get': {
          const s = await this.keySession(sessions);
          await this.call('get', { method: 'GET', path: `/api/v1/api-keys/${pick(this.keys).appname}`, bearer: s.access });
          break;
        }
        case 'list': {
          const s = await this.keySession(sessions);
          const after = Math.random() < 0.5 ? `&after=${pick(this.keys).appname}` : '';
          await this.call('list', { method: 'GET', path: `/api/v1/api-keys?limit=20${after}`, bearer: s.access });
          break;
        }
        case 'exchange':
          // The new session takes the place of one of this worker's sessions; the old one is left to expire.
          await this.exchange(sessions[replace++ % sessions.length] as Session);
          break;
        case 'refresh':
          await this.refresh(pick(sessions));
          break;
        case 'update': {
          await this.ensureAdmin();
          const k = pick(this.keys);
          await this.call('update', {
            method: 'PUT',
            path: `/api/v1/api-keys/${k.appname}`,
            bearer: this.admin?.access,
            json: { description: `soak write ${++this.writes}`, roles: k.roles },
          });
          break;
        }
        case 'temporary-key': {
          await this.ensureAdmin();
          const appname = `soak-${this.runId}-t${id}-${++temporary}`;
          const body = { description: 'soak temporary key', roles: ['viewer'] };
          const created = await this.call('create', { method: 'POST', path: '/api/v1/api-keys', bearer: this.admin?.access, json: { appname, ...body } });
          if (!created.ok) break;
          if (Math.random() < 0.5) {
            await this.call('regen', { method: 'PUT', path: `/api/v1/api-keys/${appname}/regen`, bearer: this.admin?.access, json: body });
          }
          await this.call('delete', { method: 'DELETE', path: `/api/v1/api-keys/${appname}`, bearer: this.admin?.access });
          break;
        }
        case 'login':
          await this.login();
          break;
      }
    }
  }
}

async function inBatches<T>(items: T[], size: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    await Promise.all(items.slice(i, i + size).map((item, j) => fn(item, i + j)));
  }
}
