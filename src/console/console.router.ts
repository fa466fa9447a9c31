import { Router, type Request, type Response } from 'express';
import type { ConsoleSettings } from '../config';
import type { Logger } from '../logger';
import { AppError } from '../shared/errors';
import { PATHS } from '../shared/paths';
import { methodNotAllowed } from '../http/error-handler';
import { PAGE_CSP } from '../http/security-headers';
import { loadConsoleFiles, type ConsoleFile } from './console-files';

/** The console's policy: the contract's page policy (http/security-headers.ts). */
export const CONSOLE_CSP = PAGE_CSP;

/** Hashed names change with their content, so a browser may keep them for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * GET /console/: the admin console's static files. /console redirects to /console/; the hashed
 * files of assets/ are served as they are; every other path is a client-side route and gets the
 * page, which is never stored, so a new build reaches browsers at once.
 */
export function consoleRouter(settings: ConsoleSettings, logger: Logger): Router {
  const files = loadConsoleFiles(settings.dir);
  if (!files) logger.warn({ dir: settings.dir }, 'console not built: /console/ answers 404 until `npm run build` writes it (or set CONSOLE_DIR)');

  const router = Router();
  router.use(function consolePolicy(_req, res, next) {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    next();
  });
  router.get('/assets/:file', function asset(req: Request<{ file: string }>, res) {
    const file = files?.assets.get(req.params.file);
    // A missing asset is a 404, not the page: a stale hashed name must fail loudly, not run HTML as a script.
    if (!file) throw new AppError('NotFound', `No console asset ${req.params.file}`);
    send(res, file, IMMUTABLE);
  });
  // Under assets/ only the files themselves: any other path there is no client-side route either.
  router.get('/assets/{*rest}', function notAnAsset(req) {
    throw new AppError('NotFound', `No console asset ${req.path.slice('/assets/'.length)}`);
  });
  router.get('/{*route}', function page(req, res) {
    if (!files) throw new AppError('NotFound', 'The console is not built: run npm run build');
    // Mounted at /console (matched without regard to case), so /console and /console/ both arrive
    // here as "/": the one without its slash goes to the canonical /console/.
    const query = req.originalUrl.indexOf('?');
    const pathname = query < 0 ? req.originalUrl : req.originalUrl.slice(0, query);
    if (req.path === '/' && !pathname.endsWith('/')) {
      res.redirect(301, `${PATHS.console}/${query < 0 ? '' : req.originalUrl.slice(query)}`);
      return;
    }
    send(res, files.index, 'no-store');
  });
  router.all('/{*route}', methodNotAllowed(['GET', 'HEAD']));
  return router;
}

function send(res: Response, file: ConsoleFile, cacheControl: string): void {
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Length', file.body.length);
  res.end(res.req.method === 'HEAD' ? undefined : file.body);
}
