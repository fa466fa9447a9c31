import { Router } from 'express';
import { methodNotAllowed } from '../http/error-handler';
import { PATHS } from '../shared/paths';
import type { SigningKeysService } from './signing-keys.service';

/** GET /.well-known/jwks.json: the public keys that verify our access and ID tokens, for anyone. */
export function jwksRouter(signingKeys: SigningKeysService): Router {
  const router = Router();
  router
    .route(PATHS.jwks)
    .get(async function jwkSet(_req, res) {
      res.setHeader('Cache-Control', 'public, max-age=60');
      res.json(await signingKeys.jwkSet());
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
