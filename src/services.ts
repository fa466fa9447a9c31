import type { Config } from './config';
import type { Database } from './db/database';
import { SecretBox } from './crypto/secretbox';
import { ApiKeysService } from './api-keys/api-keys.service';
import { KeyReadAlong } from './api-keys/key-read-along';
import { ValidAppkeys } from './api-keys/valid-appkeys';
import { Credentials } from './users/credentials';
import { UsersService } from './users/users.service';
import { OwnPasswords } from './users/own-password';
import { SigningKeysService } from './signing-keys/signing-keys.service';
import { refreshTokenKey, TokenSigner } from './signing-keys/token-signer';
import { ApiKeyLogins } from './sessions/api-key-logins';
import { RefreshRotations } from './sessions/refresh-rotations';
import { TokenIssuer } from './tokens/token-issuer';
import { ApiKeyGrant } from './tokens/grants/api-key.grant';
import { PasswordGrant } from './tokens/grants/password.grant';
import { RefreshGrant, type TokenEvents } from './tokens/grants/refresh.grant';
import { TokenExchangeGrant } from './tokens/grants/token-exchange.grant';
import { Dpop } from './dpop/dpop';
import { Exchanges } from './sessions/exchanges';
import type { TokenGrants } from './tokens/tokens.router';
import { BearerAuthenticator } from './bearer/bearer-authenticator';
import { ClientSecrets } from './tokens/client-secrets';
import { TokenEndpoint } from './oauth/token-endpoint';
import { PATHS } from './shared/paths';
import { RevocationService } from './oauth/revocation.service';
import { IntrospectionService } from './oauth/introspection.service';
import { AuditService } from './audit-events/audit-events.service';
import { KeyJudge } from './key-policies/key-judge';
import { MemoryKeyRateCounter, type KeyRateCounter } from './key-policies/rate-counter';
import { systemClock, type Clock } from './key-policies/policy';
import { KeyAdmissions } from './tokens/key-admission';
import { KeyPolicyService } from './api-keys/key-policy.service';
import { takeSealedCensus, type SealedCensus } from './db/sealed-secrets';
import { SEALED_APPKEYS } from './api-keys/api-keys.repository';
import { SEALED_SIGNING_KEYS } from './signing-keys/signing-keys.repository';
import { WebhooksService } from './webhooks/webhooks.service';
import { SEALED_WEBHOOK_SECRETS } from './webhooks/webhooks.repository';
import { KeyImportService } from './api-keys/key-import.service';
import { ImportedKeyPresence } from './api-keys/imported-key-presence';
import { KeyUses } from './api-keys/key-use-batches';
import { SelfRevocation } from './key-leaks/self-revocation.service';
import { SecretScanning } from './key-leaks/secret-scanning.service';
import { GithubPublicKeys } from './key-leaks/github-public-keys';
import { UsageCounter } from './usage/usage-counter';
import { UsageRecorder } from './usage/usage-recorder';
import { KeyUsageService } from './usage/usage.service';
import { KeyVerifier } from './verification/key-verifier';
import { VerifyReadAlong } from './verification/verify-read-along';

export interface Services {
  db: Database;
  apiKeys: ApiKeysService;
  users: UsersService;
  /** PUT /api/v1/me/password: a user's own password, checked as a login checks it. */
  ownPasswords: OwnPasswords;
  signingKeys: SigningKeysService;
  grants: TokenGrants;
  authenticator: BearerAuthenticator;
  /** The key routes' bearer check, which reads GET /{appname}'s key in the same round trip. */
  keyRoutesAuthenticator: KeyReadAlong;
  /** POST /oauth2/token over the same grants, and the API keys' client authentication. */
  tokenEndpoint: TokenEndpoint;
  clients: ClientSecrets;
  /** DPoP proofs (RFC 9449): checked, and spent once across instances. */
  dpop: Dpop;
  revocation: RevocationService;
  introspection: IntrospectionService;
  audit: AuditService;
  /** GET and PUT /api/v1/api-keys/{appname}/policy. */
  keyPolicies: KeyPolicyService;
  /** The one judge of keys against their policies (every authentication path; verification). */
  keyJudge: KeyJudge;
  /** The moment policies are judged at: the system clock, or a test's. */
  clock: Clock;
  /** Counts every stored secret by the master key that sealed it (the start refuses what no configured key opens). */
  sealedSecrets: () => Promise<SealedCensus>;
  /** The endpoints API, and the dispatcher of their messages (started by the server). */
  webhooks: WebhooksService;
  /** POST /api/v1/api-keys/import. */
  keyImports: KeyImportService;
  /**
   * Whether an imported key may exist (checks started by the server): verification's
   * `mayHoldImportedKeys` is `importedKeys.mayHoldImportedKeys`.
   */
  importedKeys: ImportedKeyPresence;
  /** POST /api/v1/keys/revoke. */
  selfRevocation: SelfRevocation;
  /** POST /api/v1/secret-scanning/github. */
  secretScanning: SecretScanning;
  /** POST /api/v1/keys/verify. */
  verifier: KeyVerifier;
  /** The verify route's bearer check, which reads the presented key in the same round trip. */
  verifyReadAlong: VerifyReadAlong;
  /** GET /api/v1/api-keys/{appname}/usage. */
  keyUsage: KeyUsageService;
  /** Writes the usage counts (and batched last_used) summed in memory; started and stopped by the server. */
  usageRecorder: UsageRecorder;
}

/** What the services are built with beside the configuration. */
export interface ServiceOptions {
  /** Feeds metrics. */
  tokenEvents?: TokenEvents;
  /** Where the keys' rate limits count: Redis when REDIS_URL is set, else this process's memory. */
  keyRateCounter?: KeyRateCounter;
  /** The policies' clock (tests move it across a day or a month). */
  clock?: Clock;
}

/** Wires the services together. Pure construction: nothing here touches the database. */
export function createServices(config: Config, db: Database, masterKey: Buffer, options: ServiceOptions = {}): Services {
  const { tokenEvents, clock = systemClock } = options;
  // During a MASTER_KEY rotation the previous key still opens (and verifies) what it sealed (and signed).
  const previousKey = config.masterKeyPrevious;
  const box = new SecretBox(masterKey, previousKey);
  // A retired signing key stays published while any token it signed can still be presented: access
  // and ID tokens (refresh tokens are not signed with it, see TokenSigner).
  const signingKeys = new SigningKeysService(db, box, config.accessTokenTtl + config.clockTolerance);
  const refreshKeys = previousKey ? ([refreshTokenKey(masterKey), refreshTokenKey(previousKey)] as const) : ([refreshTokenKey(masterKey)] as const);
  const signer = new TokenSigner(signingKeys, refreshKeys, {
    issuer: config.issuer,
    audience: config.audience,
    exchangeAudiences: config.exchangeAudiences,
    clockTolerance: config.clockTolerance,
  });
  const dpop = new Dpop(db, config.issuer);
  const authenticator = new BearerAuthenticator(db, signer, dpop);
  const keyRoutesAuthenticator = new KeyReadAlong(db, authenticator);
  const appkeys = new ValidAppkeys(db, box);
  const credentials = new Credentials(db, config.bcryptCost);
  // Usage counts (and verification's last_used): summed here, written in batches by the recorder (no database write per request).
  const usageRecorder = new UsageRecorder(db, new UsageCounter(clock, config.usage.counting), { flushSeconds: config.usage.flushSeconds });
  const usage = usageRecorder.counter;
  const issuer = new TokenIssuer(signer, config, usage);
  const keyJudge = new KeyJudge(options.keyRateCounter ?? new MemoryKeyRateCounter(), clock);
  const admissions = new KeyAdmissions(db, keyJudge, usage);
  const grants: TokenGrants = {
    apiKey: new ApiKeyGrant(
      db,
      issuer,
      appkeys,
      new ApiKeyLogins(db),
      { audiences: [config.issuer], maxLifetimeSeconds: 300, clockTolerance: config.clockTolerance },
      admissions,
    ),
    password: new PasswordGrant(db, issuer, credentials, config.defaultClientId),
    refresh: new RefreshGrant(db, signer, issuer, new RefreshRotations(db), config.defaultClientId, tokenEvents),
  };
  // One for verification and client authentication both, so their concurrent uses share a statement.
  const keyUses = new KeyUses(db);
  const clients = new ClientSecrets(db, appkeys, admissions, keyUses);
  // Request tokens as client libraries send them: up to an hour, for the issuer or this endpoint.
  const assertionRules = { audiences: [config.issuer, `${config.issuer}${PATHS.oauthToken}`], maxLifetimeSeconds: 3600, clockTolerance: config.clockTolerance };
  const users = new UsersService(db, config.bcryptCost, credentials);
  const policySettings = { clock, maxLifetimeDays: config.keyMaxLifetimeDays };
  const importedKeys = new ImportedKeyPresence(db);
  const verifier = new KeyVerifier(db, keyJudge, usage, importedKeys, keyUses);
  return {
    db,
    apiKeys: new ApiKeysService(db, box, keyRoutesAuthenticator, appkeys, { clock, maxLifetimeDays: config.keyMaxLifetimeDays }),
    users,
    ownPasswords: new OwnPasswords(db, users, credentials),
    signingKeys,
    grants,
    tokenEndpoint: new TokenEndpoint({
      ...grants,
      exchange: new TokenExchangeGrant(new Exchanges(db), signer, issuer, { audience: config.audience, exchangeAudiences: config.exchangeAudiences }),
      clients,
      dpop,
      assertionRules,
      clientIds: { public: new Set(config.publicClientIds), refused: new Set([config.audience, config.issuer]) },
    }),
    clients,
    dpop,
    authenticator,
    keyRoutesAuthenticator,
    revocation: new RevocationService(db, signer),
    introspection: new IntrospectionService(db, signer, config.defaultClientId),
    audit: new AuditService(db),
    keyPolicies: new KeyPolicyService(db, appkeys, { clock, maxLifetimeDays: config.keyMaxLifetimeDays }),
    keyJudge,
    clock,
    sealedSecrets: () => takeSealedCensus(db, box, [...SEALED_SIGNING_KEYS, ...SEALED_APPKEYS, ...SEALED_WEBHOOK_SECRETS]),
    webhooks: new WebhooksService(db, box, config.webhooks),
    keyImports: new KeyImportService(db, policySettings, importedKeys),
    importedKeys,
    selfRevocation: new SelfRevocation(db, clock),
    secretScanning: new SecretScanning(db, new GithubPublicKeys(config.secretScanning.keysUrl, () => clock() * 1000), config.secretScanning.leakedKeyAction, clock),
    verifier,
    verifyReadAlong: new VerifyReadAlong(db, authenticator, verifier),
    keyUsage: new KeyUsageService(db, clock),
    usageRecorder,
  };
}
