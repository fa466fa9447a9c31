import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from '../../helpers/app';
import { bearer, createUser, loginAs } from '../../helpers/factories';

export const WEBHOOKS = '/api/v1/webhooks';

/** What a receiver got: the raw body (as signed) and the headers. */
export interface Received {
  body: string;
  headers: http.IncomingHttpHeaders;
  json: { type: string; timestamp: string; data: Record<string, unknown> & { id: number; type: string } };
  at: number;
}

/**
 * How to answer: a status after a delay (and, with `after`, not before that promise settles: a test
 * holds an answer while it acts); `drop` the connection; or `trickle` a 200's body a byte at a time.
 */
export type Answer = {
  status?: number;
  delayMs?: number;
  after?: Promise<unknown>;
  headers?: Record<string, string>;
  drop?: boolean;
  trickle?: { everyMs: number; bytes: number };
};

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** The requests answered with a status, in the order their answers were written. */
  answered: Received[];
  /** Decides each answer; the default answers 200. */
  answer: (req: Received) => Answer;
  /** Resolves once `count` requests have arrived (fails after `withinMs`). */
  waitFor: (count: number, withinMs?: number) => Promise<Received[]>;
  close: () => Promise<void>;
}

/** A webhook receiver on a free loopback port (node:http), recording every request. */
export async function startReceiver(answer: Receiver['answer'] = () => ({})): Promise<Receiver> {
  const received: Received[] = [];
  const answered: Received[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    answered,
    answer,
    waitFor: async (count, withinMs = 15_000) => {
      const deadline = Date.now() + withinMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} of ${count} requests within ${withinMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return received.slice(0, count);
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      let json: Received['json'];
      try {
        json = JSON.parse(body) as Received['json'];
      } catch {
        json = undefined as unknown as Received['json'];
      }
      const got: Received = { body, headers: req.headers, json, at: Date.now() };
      received.push(got);
      const a = receiver.answer(got);
      if (a.drop) {
        req.socket.destroy();
        return;
      }
      if (a.trickle) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        let sent = 0;
        const drip = setInterval(() => {
          if (res.destroyed || ++sent > a.trickle!.bytes) {
            clearInterval(drip);
            if (!res.destroyed) res.end();
            return;
          }
          res.write('.');
        }, a.trickle.everyMs);
        return;
      }
      const reply = () => {
        answered.push(got);
        res.writeHead(a.status ?? 200, { 'content-type': 'text/plain', ...a.headers });
        res.end('ok');
      };
      if (a.after) void a.after.then(() => setTimeout(reply, a.delayMs ?? 0));
      else setTimeout(reply, a.delayMs ?? 0);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}

/** A fresh admin's access token. */
export async function adminToken(t: TestApp): Promise<string> {
  return (await loginAs(t, await createUser(t, { role: 'admin' }))).access_token;
}

/** POST /api/v1/webhooks; returns the record with its secret. */
export async function createEndpoint(t: TestApp, token: string, body: Record<string, unknown>) {
  const res = await t.http().post(WEBHOOKS).set(bearer(token)).send(body);
  if (res.status !== 201) throw new Error(`create webhook failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; url: string; events: string[]; secret: string; enabled: boolean };
}

/** The endpoint's delivery log (newest first). */
export async function deliveriesOf(t: TestApp, token: string, id: string, query: Record<string, string> = {}) {
  const res = await t.http().get(`${WEBHOOKS}/${id}/deliveries`).query(query).set(bearer(token));
  if (res.status !== 200) throw new Error(`deliveries failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as {
    id: string;
    type: string;
    status: string;
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
    next_attempt_at: number | null;
  }[];
}

/** Polls `check` until it returns true (or fails after `withinMs`). */
export async function eventually(check: () => Promise<boolean>, withinMs = 15_000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A service that sends webhooks quickly to loopback receivers. */
export const FAST_WEBHOOKS = {
  WEBHOOK_ALLOW_INSECURE: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_RETRY_SCHEDULE: '0s,1s',
  WEBHOOK_TIMEOUT_MS: '1000',
};
