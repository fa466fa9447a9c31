/** A small keep-alive HTTP/1.1 client: one call, its status, body and wall-clock latency. */
import http from 'node:http';

export interface HttpResult {
  /** 0 when no response arrived (see `error`). */
  status: number;
  body: string;
  /** Milliseconds from sending to the last byte of the body (or the failure). */
  ms: number;
  /** Connection-level failure: ECONNRESET, ECONNREFUSED, timeout, ... */
  error?: string;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  bearer?: string;
  json?: unknown;
  form?: Record<string, string>;
}

export class HttpClient {
  private readonly agent: http.Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(
    baseUrl: string,
    maxSockets: number,
    private readonly timeoutMs = 30_000,
  ) {
    const url = new URL(baseUrl);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
    // The service closes idle keep-alive connections after 5 s; let ours go first (4 s) so a request
    // never lands on a connection the server is closing at that moment.
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, timeout: 4_000 });
  }

  request(req: HttpRequest): Promise<HttpResult> {
    const headers: Record<string, string> = { accept: 'application/json' };
    let payload: string | undefined;
    if (req.json !== undefined) {
      payload = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    } else if (req.form) {
      payload = new URLSearchParams(req.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
    if (req.bearer) headers.authorization = `Bearer ${req.bearer}`;

    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    return new Promise<HttpResult>((resolve) => {
      let settled = false;
      const finish = (r: HttpResult) => {
        if (!settled) {
          settled = true;
          resolve(r);
        }
      };
      const request = http.request(
        { host: this.host, port: this.port, method: req.method, path: req.path, headers, agent: this.agent, timeout: this.timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => finish({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: elapsed() }));
          res.on('error', (err) => finish({ status: 0, body: '', ms: elapsed(), error: errorName(err) }));
        },
      );
      request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
      request.on('error', (err) => finish({ status: 0, body: '', ms: elapsed(), error: errorName(err) }));
      request.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function errorName(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code ?? err.message;
}

/** Parses a JSON body, or undefined when it is not JSON. */
export function parseJson<T>(body: string): T | undefined {
  try {
    return JSON.parse(body) as T;
  } catch {
    return undefined;
  }
}
