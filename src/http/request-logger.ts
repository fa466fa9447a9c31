import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One log line per request: method, path (never the query string), status, duration, request id.
 * Headers and bodies are never logged. A caller's X-Request-Id is kept when it is well-formed.
 */
export function requestLogger(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    quietReqLogger: true,
    serializers: {
      req: (req: { id: string; method: string; url: string; raw?: { originalUrl?: string } }) => ({
        id: req.id,
        method: req.method,
        path: (req.raw?.originalUrl ?? req.url).split('?')[0],
      }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
      // The error handler logs 5xx causes itself; the request line only says that one occurred.
      err: (err: { type?: string; message?: string }) => ({ type: err.type }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: (req, res) => `${req.method} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${res.statusCode}`,
  });
}
