import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger';

declare module 'http' {
  interface IncomingMessage {
    /** This request's id: the caller's well-formed X-Request-Id, or a fresh UUID. */
    id?: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One log line per request: method, path (never the query string), status, duration, request id.
 * Headers and bodies are never logged. A caller's X-Request-Id is kept when it is well-formed.
 *
 * Written by hand rather than with pino-http: that builds a child logger, serializers and redaction
 * for every request, which the benchmarks showed as a large share of a fast route's CPU. Here a
 * request costs one listener, and one log call only when its level is enabled (5xx always are).
 */
export function requestLogger(logger: Logger) {
  return function logRequest(req: Request, res: Response, next: NextFunction): void {
    const started = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    res.once('close', () => {
      const status = res.statusCode;
      const failed = status >= 500 || !res.writableFinished;
      if (!failed && !logger.isLevelEnabled('info')) return;
      const line = {
        req: { id, method: req.method, path: req.originalUrl.split('?')[0] },
        res: { status },
        responseTime: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
      };
      if (!res.writableFinished) logger.warn(line, `${req.method} aborted`);
      else if (status >= 500) logger.error(line, `${req.method} ${status}`);
      else logger.info(line, `${req.method} ${status}`);
    });
    next();
  };
}
