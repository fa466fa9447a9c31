import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { BODY_LIMIT, jsonOrFormBody } from '../http/body-parsers';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import type { RateLimits } from '../http/rate-limits';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { AppError } from '../shared/errors';
import { PATHS } from '../shared/paths';
import { secretScanningReport, selfRevocationBody } from './key-leaks.schemas';
import type { SelfRevocation } from './self-revocation.service';
import type { SecretScanning } from './secret-scanning.service';

/**
 * The raw bytes of a report, kept as they came: GitHub signs exactly those, and a JSON parse and
 * re-serialisation would not give them back. Only this route reads its body this way. Up to 64 KiB,
 * as every route but import (the contract's "Errors"): about 240 findings with URLs of 150 characters.
 */
const rawJson = express.raw({ type: 'application/json', limit: BODY_LIMIT });

function requireJson(req: Request, _res: Response, next: NextFunction): void {
  if (!req.is('application/json')) throw new AppError('UnsupportedMediaType', 'Content-Type must be application/json');
  next();
}

/** JSON.parse of the checked raw body: a malformed one is a 400, as on every route. */
function parsedJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError('BadRequest', 'Malformed JSON body');
  }
}

/**
 * POST /api/v1/keys/revoke (no token: the key itself is the credential; the token routes' per-address
 * limit) and POST /api/v1/secret-scanning/github (GitHub's signature on the raw body, 401 before 400).
 */
export function keyLeaksRouter(revocation: SelfRevocation, scanning: SecretScanning, limits: RateLimits): Router {
  const router = Router();

  router
    .route(PATHS.keyRevocation)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, async function revokeOwnKey(req: Request, res: Response) {
      const { key } = parseInput(selfRevocationBody, req.body ?? {}, 'body');
      await revocation.revoke(key, originOf(req));
      res.json({});
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(PATHS.githubSecretScanning)
    .post(requireJson, rawJson, async function reportLeakedKeys(req: Request, res: Response) {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      await scanning.checkSignature(raw, { identifier: req.get('github-public-key-identifier'), signature: req.get('github-public-key-signature') });
      const report = parseInput(secretScanningReport, parsedJson(raw), 'body');
      res.json(await scanning.handle(report, originOf(req)));
    })
    .all(methodNotAllowed(['POST']));

  return router;
}
