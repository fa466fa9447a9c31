import http from 'node:http';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * One request on a fresh connection. fetch() reuses pooled keep-alive sockets, and one the server
 * is closing at its keep-alive timeout fails with ECONNRESET: a client artefact these tests must
 * not mistake for the service's behaviour.
 */
export function send(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, { method, agent: false, headers: options.headers, timeout: options.timeoutMs ?? 15_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within the time-out`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** JSON or form body helpers for send(). */
export const json = (value: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
export const form = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});
