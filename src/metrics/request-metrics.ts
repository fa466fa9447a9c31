import type { NextFunction, Request, Response } from 'express';
import type { Metrics } from './metrics';
import { TOKEN_ISSUING_PATHS } from '../shared/paths';
import { joinTemplate } from '../http/request-origin';

/** The routes that issue tokens; their outcomes are counted in tokens_issued_total. */
const TOKEN_ROUTES = new Set<string>(TOKEN_ISSUING_PATHS);

/**
 * Times every request and records it on 'finish' under its route template (`/api/v1/api-keys/:appname`,
 * never the raw path: appnames stay out and label values stay few), or `unmatched`.
 *
 * The template is taken when the router assigns req.route, because a sub-router restores req.baseUrl
 * when an error leaves it, so at 'finish' a 401 from /api/v1/api-keys/x would only show `/:appname`.
 */
export function requestMetrics(metrics: Metrics) {
  return function recordRequestMetrics(req: Request, res: Response, next: NextFunction): void {
    const started = process.hrtime.bigint();
    let route: unknown;
    let template: string | undefined;
    Object.defineProperty(req, 'route', {
      configurable: true,
      enumerable: true,
      get: () => route,
      set(value: { path?: unknown } | undefined) {
        route = value;
        if (typeof value?.path === 'string') template = joinTemplate(req.baseUrl, value.path);
      },
    });
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const label = template ?? 'unmatched';
      metrics.observeRequest(req.method, label, res.statusCode, seconds);
      if (req.method === 'POST' && TOKEN_ROUTES.has(label)) metrics.recordTokenOutcome(label, res.statusCode);
    });
    next();
  };
}
