import http from 'node:http';
import { startServerProcess, type ServerProcess } from './server-process';

interface Outcome {
  sentBeforeSignal: boolean;
  /** Set when a whole response arrived: status and the parsed JSON body. */
  status?: number;
  body?: unknown;
  /** Set when no response arrived: the connection error code. */
  error?: string;
  bytesReceived: number;
}

const CREDENTIALS = 'username=ops&password=graceful-shutdown-pw';

/** One password login on a fresh connection; never rejects, records what happened instead. */
function login(baseUrl: string, sentBeforeSignal: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    let bytesReceived = 0;
    const req = http.request(
      `${baseUrl}/api/auth/bearer/token`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          bytesReceived += chunk.length;
          text += chunk.toString();
        });
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ sentBeforeSignal, status: res.statusCode, body, bytesReceived });
        });
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ sentBeforeSignal, error: err.code ?? err.message, bytesReceived }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ sentBeforeSignal, error: err.code ?? err.message, bytesReceived }));
    req.end(CREDENTIALS);
  });
}

describe('graceful shutdown of a real server process', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    // bcrypt at cost 11 (~0.12 s a login on a quiet core) keeps the burst of 24 in flight for over a
    // second. The shutdown timeout is far longer than the burst even on a loaded CI machine: the test
    // is about every accepted request finishing, not about how fast.
    server = await startServerProcess({
      BCRYPT_COST: '11',
      BOOTSTRAP_ADMIN_USERNAME: 'ops',
      BOOTSTRAP_ADMIN_PASSWORD: 'graceful-shutdown-pw',
      SHUTDOWN_TIMEOUT: '40',
    });
  }, 30_000);
  afterAll(() => server.cleanup());

  it('when SIGTERM arrives during a burst, then every accepted request gets a complete response and the process exits 0', async () => {
    const inFlight = Array.from({ length: 24 }, () => login(server.baseUrl, true));
    // Long enough for the server to have accepted every connection, far shorter than the burst.
    await new Promise((r) => setTimeout(r, 600));

    const signalledAt = Date.now();
    const stopped = server.stop();
    const afterSignal: Promise<Outcome>[] = [];
    for (let i = 0; i < 20; i++) {
      afterSignal.push(login(server.baseUrl, false));
      await new Promise((r) => setTimeout(r, 10));
    }
    const outcomes = await Promise.all([...inFlight, ...afterSignal]);
    const { code: exitCode } = await stopped;
    const exitedAfterMs = Date.now() - signalledAt;

    // Requests in flight at the signal all finish, with a whole token response.
    for (const outcome of outcomes.filter((o) => o.sentBeforeSignal)) {
      expect(outcome.status).toBe(200);
      expect(outcome.body).toMatchObject({ token_type: 'bearer', access_token: expect.any(String) });
    }
    // Later requests are either served whole or turned away before any byte of a response.
    for (const outcome of outcomes.filter((o) => !o.sentBeforeSignal)) {
      if (outcome.status !== undefined) {
        expect(outcome.status).toBe(200);
        expect(outcome.body).toMatchObject({ token_type: 'bearer' });
      } else {
        expect(outcome.bytesReceived).toBe(0);
        expect(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']).toContain(outcome.error);
      }
    }
    expect(exitCode).toBe(0);
    // By itself, before SHUTDOWN_TIMEOUT would have forced it.
    expect(exitedAfterMs).toBeLessThan(40_000);
  }, 60_000);
});
