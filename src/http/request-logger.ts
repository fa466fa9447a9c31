import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** This request's id: the caller's well-formed X-Request-Id, or a fresh UUID. */
      requestId?: string;
      /** When the request reached the app (process.hrtime.bigint()), for the log line's duration. */
      receivedAt?: bigint;
      /** Set when the request was a refused login, which the failed-login limits count. */
      loginRefused?: boolean;
      /** Set when a bearer route refused the token, which the per-address limit of refused tokens counts. */
      bearerRefused?: boolean;
    }
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One log line per request: method, path (never the query string), status, duration, request id.
 * Headers and bodies are never logged. A caller's X-Request-Id is kept when it is well-formed.
 *
 * Written by hand rather than with pino-http: that builds a child logger, serializers and redaction
 * for every request, which the benchmarks showed as a large share of a fast route's CPU. Here a
 * request costs one listener, shared by all requests (what it needs is on the response), and one log
 * call only when its level is enabled (5xx always are).
 *
 * The id and the start time are kept in res.locals, Express's per-request store, rather than as new
 * properties of the request: adding two properties to Node's request object costs more CPU per
 * request than storing them in res.locals (docs/performance.md, "request overhead").
 */
export function requestLogger(logger: Logger) {
  function logResponse(this: Response): void {
    const status = this.statusCode;
    const failed = status >= 500 || !this.writableFinished;
    if (!failed && !logger.isLevelEnabled('info')) return;
    const req = this.req;
    const { requestId, receivedAt } = this.locals;
    const line = {
      req: { id: requestId, method: req.method, path: req.originalUrl.split('?')[0] },
      res: { status },
      responseTime: Math.round(Number(process.hrtime.bigint() - receivedAt!) / 1e4) / 100,
    };
    if (!this.writableFinished) logger.warn(line, `${req.method} aborted`);
    else if (status >= 500) logger.error(line, `${req.method} ${status}`);
    else logger.info(line, `${req.method} ${status}`);
  }

  return function logRequest(req: Request, res: Response, next: NextFunction): void {
    const locals = res.locals;
    locals.receivedAt = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    // A response closes once; `on` spares the wrapper and the removal that `once` costs per request.
    res.on('close', logResponse);
    next();
  };
}
