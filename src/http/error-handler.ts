import type { NextFunction, Request, Response } from 'express';
import { AppError, DpopBoundTokenError, DpopProofError, ERROR_STATUS, LoginRefusedError, OAuthError, UnauthorizedError, type ErrorName } from '../shared/errors';
import { DPOP_SIGNING_ALGORITHMS } from '../shared/dpop';
import { isDatabaseUnavailable } from '../db/database';
import { FORM_FIELD_LIMIT } from './body-parsers';
import { stdSerializers } from 'pino';
import type { Logger } from '../logger';

const NAME_BY_STATUS = new Map<number, ErrorName>(Object.entries(ERROR_STATUS).map(([name, status]) => [status, name as ErrorName]));

/** body-parser's error types, which are client faults with a fixed meaning. */
/** A body limit in bytes as the docs state it: 64 KiB, or 1 MiB on the import route. */
const sizeOf = (bytes: unknown) => (bytes === 1024 * 1024 ? '1 MiB' : '64 KiB');

function fromBodyParser(err: { type?: unknown; status?: unknown; limit?: unknown }): AppError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return new AppError('BadRequest', 'Malformed JSON body');
    case 'entity.too.large':
      return new AppError('PayloadTooLarge', `Request body is larger than ${sizeOf(err.limit)}`);
    case 'parameters.too.many':
      return new AppError('BadRequest', `A form body may carry at most ${FORM_FIELD_LIMIT} fields`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UnsupportedMediaType', 'Unsupported body encoding or charset');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new AppError('BadRequest', 'Request body could not be read');
  }
  const status = typeof err.status === 'number' ? err.status : undefined;
  const name = status && status < 500 ? NAME_BY_STATUS.get(status) : undefined;
  return name ? new AppError(name, 'Bad request') : undefined;
}

/** Any error as the one the client is answered with: ours, an outage, a body-parser refusal, or an unexpected fault. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) return new AppError('ServiceUnavailable', 'The service is temporarily unavailable');
  if (err && typeof err === 'object') {
    const parsed = fromBodyParser(err as { type?: unknown; status?: unknown; limit?: unknown });
    if (parsed) return parsed;
  }
  return new AppError('InternalServerError', 'An unexpected error occurred');
}

/** RFC 6750 limits error_description to printable ASCII without `"` or `\\`; a header must never throw. */
function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]|["\\]/g, "'");
}

const DPOP_ALGS = `algs="${DPOP_SIGNING_ALGORITHMS.join(' ')}"`;

/**
 * The challenge of a 401 (RFC 6750 §3, RFC 9449 §7.1): in the scheme the caller used, with
 * `invalid_token` when a token was sent and refused, `invalid_dpop_proof` for a bad DPoP proof; a
 * DPoP-bound token sent as a bearer token also gets a DPoP challenge, naming the scheme it needs.
 */
function challengeOf(error: AppError, dpopScheme: boolean): string {
  const refused = error instanceof UnauthorizedError ? error.tokenRefused : true;
  const description = `error_description="${headerSafe(error.message)}"`;
  if (error instanceof DpopProofError) return `DPoP error="invalid_dpop_proof", ${description}, ${DPOP_ALGS}`;
  if (dpopScheme) return refused ? `DPoP error="invalid_token", ${description}, ${DPOP_ALGS}` : `DPoP ${DPOP_ALGS}`;
  if (error instanceof DpopBoundTokenError) return `Bearer error="invalid_token", ${description}, DPoP ${DPOP_ALGS}`;
  return refused ? `Bearer error="invalid_token", ${description}` : 'Bearer';
}

/**
 * The one place HTTP errors are written: always `{status, name, message}`. Server faults are
 * logged with their cause and answered without any detail of it.
 */
export function errorHandler(logger: Logger) {
  return function handleError(err: unknown, req: Request, res: Response, next: NextFunction): void {
    if (res.headersSent) return next(err);
    const error = toAppError(err);
    if (error.status >= 500) {
      const cause = err instanceof Error ? stdSerializers.err(err) : String(err);
      logger.error({ req: { id: res.locals.requestId, method: req.method, path: req.path }, cause }, 'request failed');
    }
    // A refused login counts against the failed-login limits, whatever status its route answers with.
    if (err instanceof LoginRefusedError || (err instanceof OAuthError && err.cause instanceof LoginRefusedError)) res.locals.loginRefused = true;
    if (error instanceof OAuthError) {
      if (error.basicChallenge) res.setHeader('WWW-Authenticate', 'Basic realm="token endpoint"');
    } else if (error instanceof UnauthorizedError || error.status === 401) {
      res.setHeader('WWW-Authenticate', challengeOf(error, res.locals.authScheme === 'DPoP'));
    }
    if (error.retryAfter !== undefined) res.setHeader('Retry-After', String(error.retryAfter));
    res.status(error.status).json(error.toBody());
  };
}

/** Unknown routes: 404 in the uniform body. */
export function notFoundHandler(req: Request): never {
  throw new AppError('NotFound', `No route for ${req.method} ${req.path}`);
}

/** Known path, wrong method: 405 with an Allow header. */
export function methodNotAllowed(allowed: string[]) {
  return function rejectMethod(req: Request, res: Response): never {
    res.setHeader('Allow', allowed.join(', '));
    throw new AppError('MethodNotAllowed', `${req.method} is not allowed here; use ${allowed.join(', ')}`);
  };
}
