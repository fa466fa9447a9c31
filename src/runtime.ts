import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type Config } from './config';
import type { Logger } from './logger';
import { migrateDatabase, openDatabase, willCreateDatabase } from './db/open';
import { isDatabaseUnavailable, type Queryable } from './db/database';
import { resolveMasterKey } from './crypto/master-key';
import { createServices, type ServiceOptions, type Services } from './services';
import { SYSTEM_CONTEXT } from './shared/audit-context';
import { PATHS } from './shared/paths';
import { USERNAME_PATTERN, USERNAME_RULE } from './shared/names';
import { newPasswordProblem } from './users/password-rules';
import { hashAhead, type HashedAhead } from './users/users.service';
import { setAuditRetention } from './audit-trail/audit-trail';

/** Where the first start writes the admin password it generated, in DATA_DIR. */
export const FIRST_ADMIN_PASSWORD_FILE = 'first-admin-password';

/**
 * Everything the server and the command line share: database open and migrated, master key
 * resolved, services built, a signing key present, the bootstrap admin created.
 */
export async function startRuntime(
  config: Config,
  logger: Logger,
  options: ServiceOptions & { createFirstAdmin?: boolean } = {},
): Promise<Services> {
  if (config.bcryptCost < 10) logger.warn({ cost: config.bcryptCost }, 'BCRYPT_COST below 10 is only fit for tests');
  if (config.bootstrapAdmin) assertBootstrapAdminAcceptable(config.bootstrapAdmin);
  const ahead = firstAdminHashAhead(config, options.createFirstAdmin);
  const db = await openDatabase(config, logger);
  try {
    await untilDatabaseAnswers(() => migrateDatabase(config, db, logger, (owner) => applyAuditRetention(owner, config, logger)), logger);
    const services = createServices(config, db, await resolveMasterKey(config, logger), options);
    await checkMasterKey(services, config, logger);
    if (config.bootstrapAdmin) {
      const { username, password } = config.bootstrapAdmin;
      const outcome = await services.users.bootstrapAdmin(username, password, SYSTEM_CONTEXT, ahead);
      if (outcome === 'created') logger.info({ username }, 'bootstrap admin created');
      else if (outcome === 'name_taken') logger.warn({ username }, 'no admin exists, but BOOTSTRAP_ADMIN_USERNAME names an existing user: left as it is');
    } else if (options.createFirstAdmin) {
      await announceFirstAdmin(services, config, logger, ahead);
    }
    return services;
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

/**
 * The first admin's password hash, begun before the database opens when that database will be new,
 * so certainly without users: bcrypt (0.3 to 0.45 s at cost 12) then runs on the thread pool while
 * PGlite loads, rather than after (docs/performance.md, "Starting"). Otherwise none: a database that
 * exists mostly has its admin, and hashing for nothing would slow every start.
 */
function firstAdminHashAhead(config: Config, createFirstAdmin: boolean | undefined): HashedAhead | undefined {
  if (!willCreateDatabase(config)) return undefined;
  if (config.bootstrapAdmin) return hashAhead(config.bcryptCost, config.bootstrapAdmin.password);
  return createFirstAdmin && config.env !== 'production' ? hashAhead(config.bcryptCost) : undefined;
}

/**
 * Writes AUDIT_RETENTION_DAYS where prune_audit_events() reads it, as the schema owner (over
 * MIGRATION_DATABASE_URL when set): the runtime role may call the function but not choose how much
 * it deletes. One setting for the whole database, so with several instances the last one started
 * wins. A role that may only read it (apikeys_runtime without MIGRATION_DATABASE_URL) leaves the
 * owner's retention in force, and the log says so when it differs.
 */
async function applyAuditRetention(owner: Queryable, config: Config, logger: Logger): Promise<void> {
  const inForce = await setAuditRetention(owner, config.auditRetentionDays);
  if (inForce !== config.auditRetentionDays) {
    logger.warn(
      { auditRetentionDays: config.auditRetentionDays, inForce },
      `AUDIT_RETENTION_DAYS is not applied: the role of DATABASE_URL may not change the audit retention, so the schema owner's ${inForce} days stay in force; ` +
        'set MIGRATION_DATABASE_URL to the owner so the service can write it at start',
    );
  }
}

/**
 * Counts every stored secret by the master key that sealed it, so that a wrong or missing key stops
 * the start with a message naming the variables, rather than a crypto error at start or a 500 at a
 * key's first exchange. During a rotation it says how much is left for `keys rewrap`. Then makes sure
 * a signing key exists (created here on a new database).
 */
async function checkMasterKey(services: Services, config: Config, logger: Logger): Promise<void> {
  const census = await services.sealedSecrets();
  if (census.unopenable > 0) {
    const refusal = config.masterKeyPrevious
      ? 'open under neither MASTER_KEY nor MASTER_KEY_PREVIOUS'
      : config.masterKey
        ? 'do not open under MASTER_KEY'
        : `do not open under the key in ${config.dataDir}/master.key (MASTER_KEY is not set)`;
    throw new Error(
      `MASTER_KEY: ${census.unopenable} of the ${census.total} secrets stored in the database ${refusal}. Set MASTER_KEY to the key they were sealed ` +
        'with; while rotating, set MASTER_KEY to the new key and MASTER_KEY_PREVIOUS to the old one, then run `npm run cli -- keys rewrap`.',
    );
  }
  if (config.masterKeyPrevious) {
    if (census.underPrevious > 0) {
      logger.warn({ underPrevious: census.underPrevious, total: census.total }, `${census.underPrevious} stored secrets are still sealed under MASTER_KEY_PREVIOUS: run npm run cli -- keys rewrap`);
    } else {
      logger.info('every stored secret is sealed under MASTER_KEY; MASTER_KEY_PREVIOUS only still opens refresh tokens from before the rotation');
    }
  }
  if (census.legacy > 0) {
    logger.info({ legacy: census.legacy }, `${census.legacy} stored secrets are in the first sealed format and were opened one by one to check them; npm run cli -- keys rewrap updates them, which makes this check quick`);
  }
  await services.signingKeys.initialise();
}

/**
 * The bootstrap admin follows the rules of any user, or the service does not start: a weak password
 * set once in a deployment file would otherwise guard the admin for good.
 */
function assertBootstrapAdminAcceptable(admin: { username: string; password: string }): void {
  const problems: string[] = [];
  if (!USERNAME_PATTERN.test(admin.username)) {
    problems.push(`BOOTSTRAP_ADMIN_USERNAME: must be ${USERNAME_RULE}`);
  }
  const passwordProblem = newPasswordProblem(admin.password);
  if (passwordProblem) problems.push(`BOOTSTRAP_ADMIN_PASSWORD: ${passwordProblem}`);
  if (problems.length) throw new ConfigError(problems);
}

/**
 * With no users and no BOOTSTRAP_ADMIN_* variables, makes an admin with a generated password and
 * writes the password to a file in DATA_DIR that only this OS user can read; the log names the file,
 * never the password (logs are often shipped and kept). In production the service makes no admin
 * itself: it says how to.
 */
async function announceFirstAdmin(services: Services, config: Config, logger: Logger, ahead: HashedAhead | undefined): Promise<void> {
  if (config.env === 'production') {
    if (!(await services.users.anyExist())) logger.warn('no users exist; create an admin with: npm run cli -- users add <name> --role admin');
    return;
  }
  const file = path.resolve(config.dataDir, FIRST_ADMIN_PASSWORD_FILE);
  const username = await services.users.createFirstAdmin(SYSTEM_CONTEXT, {
    async deliver(password) {
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      // Written anew and renamed over any file left from an earlier database, whatever that one's mode.
      const fresh = `${file}.${process.pid}.tmp`;
      await writeFile(fresh, `${password}\n`, { mode: 0o600, flag: 'wx' });
      await rename(fresh, file);
    },
    retract: () => rm(file, { force: true }),
  }, ahead);
  if (username) {
    // Changed while the service runs: the command line cannot open the embedded database beside it.
    const change = config.console.enabled
      ? `sign in to the console at ${config.issuer}${PATHS.console}/, change it there with "Change password"`
      : `change it with PUT ${PATHS.me}/password (docs/users.md)`;
    logger.warn(
      { username, passwordFile: file },
      `no users existed, so an admin was created; its password is in ${file} (readable by this OS user only): ${change}, and delete the file`,
    );
  }
}

const START_RETRY_WINDOW_MS = 30_000;

/**
 * The first contact with the database, retried while it is merely unreachable (still starting, a
 * slow first connection) for up to 30 s, so a service started beside its database does not die at once.
 */
async function untilDatabaseAnswers<T>(first: () => Promise<T>, logger: Logger): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await first();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() - started > START_RETRY_WINDOW_MS) throw err;
      logger.warn({ attempt, cause: (err as Error).message }, 'database not reachable yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * attempt, 3_000)));
    }
  }
}
