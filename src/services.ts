import type { Config } from './config';
import type { Database } from './db/database';
import { SecretBox } from './crypto/secretbox';
import { ApiKeysService } from './api-keys/api-keys.service';
import { KeyReadAlong } from './api-keys/key-read-along';
import { ValidAppkeys } from './api-keys/valid-appkeys';
import { Credentials } from './users/credentials';
import { UsersService } from './users/users.service';
import { SigningKeysService } from './signing-keys/signing-keys.service';
import { refreshTokenKey, TokenSigner } from './signing-keys/token-signer';
import { ApiKeyLogins } from './sessions/api-key-logins';
import { RefreshRotations } from './sessions/refresh-rotations';
import { TokenIssuer } from './tokens/token-issuer';
import { ApiKeyGrant } from './tokens/grants/api-key.grant';
import { PasswordGrant } from './tokens/grants/password.grant';
import { RefreshGrant, type TokenEvents } from './tokens/grants/refresh.grant';
import type { TokenGrants } from './tokens/tokens.router';
import { BearerAuthenticator } from './bearer/bearer-authenticator';
import { RevocationService } from './oauth/revocation.service';
import { IntrospectionService } from './oauth/introspection.service';
import { AuditService } from './audit-events/audit-events.service';

export interface Services {
  db: Database;
  apiKeys: ApiKeysService;
  users: UsersService;
  signingKeys: SigningKeysService;
  grants: TokenGrants;
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
  const appkeys = new ValidAppkeys(db, box);
  const credentials = new Credentials(db, config.bcryptCost);
  const issuer = new TokenIssuer(signer, config);
  return {
    db,
    apiKeys: new ApiKeysService(db, box, keyRoutesAuthenticator, appkeys),
    users: new UsersService(db, config.bcryptCost, credentials),
    signingKeys,
    grants: {
      apiKey: new ApiKeyGrant(db, issuer, appkeys, new ApiKeyLogins(db), { issuer: config.issuer, clockTolerance: config.clockTolerance }),
      password: new PasswordGrant(db, issuer, credentials),
      refresh: new RefreshGrant(db, signer, issuer, new RefreshRotations(db), tokenEvents),
    },
    authenticator,
    keyRoutesAuthenticator,
    revocation: new RevocationService(db, signer),
    introspection: new IntrospectionService(db, signer),
    audit: new AuditService(db),
  };
}
