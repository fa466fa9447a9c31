/** What the service is configured with: parsed once at start (loadConfig), then frozen. */
export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  /**
   * Where migrations run when set: a role that owns the schema, while databaseUrl may be a role that
   * owns nothing (docs/operations.md, "Database roles").
   */
  readonly migrationDatabaseUrl: string | undefined;
  /**
   * The role the service runs as, to which every migration run grants what the service needs
   * (DATABASE_RUNTIME_ROLE, else DATABASE_URL's user when migrations run as another); undefined when
   * one role does everything.
   */
  readonly runtimeRole: string | undefined;
  readonly databasePoolSize: number;
  /** Seconds to wait for a connection, and for one statement, before answering 503. */
  readonly databaseConnectTimeout: number;
  readonly databaseStatementTimeout: number;
  /**
   * `transaction` when a pooler such as PgBouncer in `pool_mode = transaction` sits in front of
   * PostgreSQL: then each transaction may run on another server connection, so the service keeps no
   * state on a connection (no named prepared statements, no settings made per connection).
   */
  readonly databasePooling: 'session' | 'transaction';
  /** Seconds between two pruning rounds (ended sessions, spent replay records, ended graces, old audit events). */
  readonly maintenanceIntervalSeconds: number;
  /** Audit events older than this many days are deleted; 0 keeps every event. */
  readonly auditRetentionDays: number;
  readonly dataDir: string;
  readonly issuer: string;
  /** The `aud` of access tokens: every resource server checks it (AUDIENCE, default the issuer). */
  readonly audience: string;
  /**
   * What else a token exchange may name as its `audience` or `resource` besides `audience`
   * (EXCHANGE_AUDIENCES); an exchanged token for one of them is refused by this service's own routes.
   */
  readonly exchangeAudiences: readonly string[];
  /** The client a user's tokens are for when the login named none (DEFAULT_CLIENT_ID). */
  readonly defaultClientId: string;
  /**
   * The clients a password or refresh grant may name without authenticating: DEFAULT_CLIENT_ID and
   * PUBLIC_CLIENT_IDS. Any other client_id must be an API key that authenticates with its secret.
   */
  readonly publicClientIds: readonly string[];
  /** 32 raw bytes; undefined means "load or generate one in dataDir" (refused in production). */
  readonly masterKey: Buffer | undefined;
  /** The key before the last rotation: opens what it sealed until `keys rewrap` re-seals it under masterKey. */
  readonly masterKeyPrevious: Buffer | undefined;
  readonly accessTokenTtl: number;
  readonly refreshTokenTtl: number;
  readonly sessionMaxTtl: number;
  /** Leeway, in seconds, for exp/iat checks on every token we verify. */
  readonly clockTolerance: number;
  readonly bcryptCost: number;
  readonly bootstrapAdmin: { readonly username: string; readonly password: string } | undefined;
  /** Express `trust proxy`: false, a hop count, or the proxies' addresses (never true: see trustProxy). */
  readonly trustProxy: false | number | string;
  readonly logLevel: string;
  readonly shutdownTimeoutSeconds: number;
  readonly rateLimits: RateLimitSettings;
  /** KEY_MAX_LIFETIME_DAYS: the longest lifetime a create or a policy PUT may give a key; undefined: none. */
  readonly keyMaxLifetimeDays: number | undefined;
  readonly redis: RedisSettings;
  readonly metrics: MetricsSettings;
  readonly console: ConsoleSettings;
  readonly apiReference: ApiReferenceSettings;
  readonly webhooks: WebhookSettings;
  readonly usage: UsageSettings;
}

export interface UsageSettings {
  /** USAGE_FLUSH_SECONDS: how often the counts summed in memory are written (the most a crash loses). */
  readonly flushSeconds: number;
  /** USAGE_RETENTION_DAYS: counts older than this are pruned by the maintenance pass. */
  readonly retentionDays: number;
  /** USAGE_COUNTING: false counts nothing (for the bench's measure of what counting costs). */
  readonly counting: boolean;
}

export interface WebhookSettings {
  /** One attempt's deadline, connection to the end of the answer (WEBHOOK_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** Delay before each retry, milliseconds; after the last one a message is failed (WEBHOOK_RETRY_SCHEDULE). */
  readonly retryScheduleMs: readonly number[];
  /** Finished messages are pruned after this many days. */
  readonly retentionDays: number;
  /** http: and non-public addresses allowed (development and tests only). */
  readonly allowInsecure: boolean;
  /** How often each instance looks for due messages. */
  readonly pollIntervalMs: number;
  /** Messages one instance sends to one endpoint at once. */
  readonly maxInFlight: number;
}

export interface ConsoleSettings {
  /** Whether /console/ is served at all (CONSOLE_ENABLED); off, every path under it is 404. */
  readonly enabled: boolean;
  /**
   * The built console (index.html and assets/), as `npm run build` writes it: dist/console, beside
   * the compiled server, unless CONSOLE_DIR says otherwise (tests, and `npm run dev`, run from src/,
   * where nothing is built).
   */
  readonly dir: string;
}

/** The API reference (Swagger UI over the OpenAPI document), as `npm run build` writes it. */
export interface ApiReferenceSettings {
  /** Whether /api-reference/ is served at all (API_REFERENCE_ENABLED); off, every path under it is 404. */
  readonly enabled: boolean;
  /** index.html, assets/ and files.json: dist/api-reference beside the compiled server unless API_REFERENCE_DIR says otherwise. */
  readonly dir: string;
}

export interface MetricsSettings {
  readonly enabled: boolean;
  /** GET /metrics is served on this port by a server of its own when set, on the main port otherwise. */
  readonly port: number | undefined;
  /**
   * Where that server listens: 127.0.0.1 unless METRICS_HOST says otherwise, since scraping needs no
   * token and the metrics tell an attacker about traffic and load.
   */
  readonly host: string;
}

export interface RedisSettings {
  /** Counters shared by every instance live in Redis when set, in each process's memory otherwise. */
  readonly url: string | undefined;
  /** How long one command may take, sent or not, before Redis counts as down (REDIS_TIMEOUT_MS). */
  readonly timeoutMs: number;
}

export interface RateLimitRule {
  readonly limit: number;
  readonly windowSeconds: number;
}

export interface RateLimitSettings {
  readonly enabled: boolean;
  /** Failed password logins per username and client address (never per username alone: no lockout by strangers). */
  readonly passwordFailures: RateLimitRule;
  /** Failed password logins per client address, whatever the username; the same window. */
  readonly passwordAddressFailures: RateLimitRule;
  /** Past this many failed logins of one username from all addresses in the window, its attempts are slowed and an alert raised. */
  readonly accountAlert: number;
  /** Refused bearer tokens per client address on bearer-protected routes. */
  readonly bearerFailures: RateLimitRule;
  /** All requests to the three token routes, per client address. */
  readonly tokenRoutes: RateLimitRule;
  /** Key operations, per authenticated principal. */
  readonly keyOperations: RateLimitRule;
  readonly redisPrefix: string;
}
