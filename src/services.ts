import type { Config } from './config';
import type { Database } from './db/database';
import { SecretBox } from './crypto/secretbox';
import { ApiKeysService } from './api-keys/api-keys.service';
import { KeyReadAlong } from './api-keys/key-read-along';
import { UsersService } from './users/users.service';
import { SigningKeysService } from './signing-keys/signing-keys.service';
import { refreshTokenKey, TokenSigner } from './signing-keys/token-signer';
import { TokenService, type TokenEvents } from './tokens/token.service';
import { BearerAuthenticator } from './bearer/bearer-authenticator';
import { RevocationService } from './oauth/revocation.service';
import { IntrospectionService } from './oauth/introspection.service';
import { AuditService } from './audit-events/audit-events.service';

export interface Services {
  db: Database;
  apiKeys: ApiKeysService;
  users: UsersService;
  signingKeys: SigningKeysService;
  tokens: TokenService;
  authenticator: BearerAuthenticator;
  /** The key routes' bearer check, which reads GET /{appname}'s key in the same round trip. */
  keyRoutesAuthenticator: KeyReadAlong;
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
  const authenticator = new BearerAuthenticator(db, signer);
  const keyRoutesAuthenticator = new KeyReadAlong(db, authenticator);
  const apiKeys = new ApiKeysService(db, box, keyRoutesAuthenticator);
  const users = new UsersService(db, config.bcryptCost);
  const tokens = new TokenService(db, signer, apiKeys, users, config, tokenEvents);
  return {
    db,
    apiKeys,
    users,
    signingKeys,
    tokens,
    authenticator,
    keyRoutesAuthenticator,
    revocation: new RevocationService(db, signer),
    introspection: new IntrospectionService(db, signer),
    audit: new AuditService(db),
  };
}
