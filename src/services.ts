import type { Config } from './config';
import type { Database } from './db/database';
import { SecretBox } from './crypto/secretbox';
import { ApiKeysService } from './api-keys/api-keys.service';
import { UsersService } from './users/users.service';
import { SigningKeysService } from './auth/signing-keys.service';
import { refreshTokenKey, TokenSigner } from './auth/jwt';
import { TokenService, type TokenEvents } from './auth/token.service';
import { BearerAuthenticator } from './auth/bearer-authenticator';
import { RevocationService } from './auth/revocation.service';
import { IntrospectionService } from './auth/introspection.service';
import { AuditService } from './audit/audit.service';

export interface Services {
  db: Database;
  apiKeys: ApiKeysService;
  users: UsersService;
  signingKeys: SigningKeysService;
  tokens: TokenService;
  authenticator: BearerAuthenticator;
  revocation: RevocationService;
  introspection: IntrospectionService;
  audit: AuditService;
}

/** Wires the services together. Pure construction: nothing here touches the database. `tokenEvents` feeds metrics. */
export function createServices(config: Config, db: Database, masterKey: Buffer, tokenEvents?: TokenEvents): Services {
  const box = new SecretBox(masterKey);
  // A retired signing key stays published while any token it signed can still be presented: access
  // and ID tokens (refresh tokens are not signed with it, see TokenSigner).
  const signingKeys = new SigningKeysService(db, box, config.accessTokenTtl + config.clockTolerance);
  const signer = new TokenSigner(signingKeys, refreshTokenKey(masterKey), {
    issuer: config.issuer,
    audience: config.issuer,
    clockTolerance: config.clockTolerance,
  });
  const apiKeys = new ApiKeysService(db, box);
  const users = new UsersService(db, config.bcryptCost);
  const tokens = new TokenService(db, signer, apiKeys, users, config, tokenEvents);
  return {
    db,
    apiKeys,
    users,
    signingKeys,
    tokens,
    authenticator: new BearerAuthenticator(db, signer),
    revocation: new RevocationService(db, signer),
    introspection: new IntrospectionService(db, signer),
    audit: new AuditService(db),
  };
}
