import { readFile } from 'node:fs/promises';
import { Router, type NextFunction, type Request, type Response } from 'express';
import type { ApiReferenceSettings } from '../config';
import type { Logger } from '../logger';
import { AppError } from '../shared/errors';
import { PATHS } from '../shared/paths';
import { methodNotAllowed } from '../http/error-handler';
import { PAGE_CSP } from '../http/security-headers';
import { loadReferenceFiles, type ReferenceFile } from './api-reference-files';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * GET /api-reference/: the OpenAPI document (GET /api/v1/openapi.json) rendered in the browser by
 * Swagger UI, built by `npm run build` and served as static files under the console's strict CSP.
 * Nothing of the viewer runs in the server: it only sends the built files.
 */
export function apiReferenceRouter(settings: ApiReferenceSettings, logger: Logger): Router {
  const files = loadReferenceFiles(settings.dir);
  const send = sendFrom(new Map());
  if (!files) logger.warn({ dir: settings.dir }, 'API reference not built: /api-reference/ answers 404 until `npm run build` writes it (or set API_REFERENCE_DIR)');

  const router = Router();
  router.use(function referencePolicy(_req, res, next) {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    next();
  });
  router.get('/assets/:file', function asset(req: Request<{ file: string }>, res, next) {
    const file = files?.assets.get(req.params.file);
    if (!file) throw new AppError('NotFound', `No API reference asset ${req.params.file}`);
    send(req, res, next, file);
  });
  router.get('/', function page(req, res, next) {
    if (!files) throw new AppError('NotFound', 'The API reference is not built: run npm run build');
    // Mounted at /api-reference, so the path without its slash arrives here too: relative URLs want the slash.
    const query = req.originalUrl.indexOf('?');
    const pathname = query < 0 ? req.originalUrl : req.originalUrl.slice(0, query);
    if (!pathname.endsWith('/')) {
      res.redirect(301, `${PATHS.apiReference}/`);
      return;
    }
    send(req, res, next, files.index);
  });
  router.get('/{*route}', function elsewhere(req) {
    throw new AppError('NotFound', `No API reference page ${req.path}`);
  });
  router.all('/{*route}', methodNotAllowed(['GET', 'HEAD']));
  return router;
}

/**
 * Sends a file, read from disk at its first request and then kept: at most the page and its four
 * files, gzipped (~490 KiB, what browsers ask for) or not (~1.9 MiB), and only in a process that was
 * asked for them, rather than new read buffers for every answer (docs/performance.md, "starting").
 */
function sendFrom(kept: Map<string, Promise<Buffer>>) {
  return function send(req: Request, res: Response, next: NextFunction, file: ReferenceFile): void {
    const gzip = file.gzip && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
    const path = gzip ? `${file.path}.gz` : file.path;
    let body = kept.get(path);
    if (!body) {
      body = readFile(path);
      kept.set(path, body);
      body.catch(() => kept.delete(path));
    }
    body.then(
      (bytes) => {
        res.setHeader('Cache-Control', file.immutable ? IMMUTABLE : 'no-store');
        res.setHeader('Content-Type', file.contentType);
        if (file.gzip) res.setHeader('Vary', 'Accept-Encoding');
        if (gzip) res.setHeader('Content-Encoding', 'gzip');
        res.setHeader('Content-Length', bytes.length);
        res.end(req.method === 'HEAD' ? undefined : bytes);
      },
      (err: unknown) => next(new AppError('NotFound', 'The API reference build is incomplete: run npm run build', { cause: err })),
    );
  };
}
