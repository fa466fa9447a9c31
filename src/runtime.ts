import type { Config } from './config';
import type { Logger } from './logger';
import { migrateDatabase, openDatabase } from './db/open';
import { isDatabaseUnavailable } from './db/database';
import { resolveMasterKey } from './crypto/master-key';
import { UnopenableSecretError } from './crypto/secretbox';
import { createServices, type Services } from './services';
import type { TokenEvents } from './tokens/grants/refresh.grant';
import { SYSTEM_CONTEXT } from './shared/audit-context';

/**
 * Everything the server and the command line share: database open and migrated, master key
 * resolved, services built, a signing key present, the bootstrap admin created.
 */
export async function startRuntime(
  config: Config,
  logger: Logger,
  options: { createFirstAdmin?: boolean; tokenEvents?: TokenEvents } = {},
): Promise<Services> {
  if (config.bcryptCost < 10) logger.warn({ cost: config.bcryptCost }, 'BCRYPT_COST below 10 is only fit for tests');
  const db = await openDatabase(config, logger);
  try {
    await untilDatabaseAnswers(() => migrateDatabase(config, db, logger), logger);
    const services = createServices(config, db, await resolveMasterKey(config, logger), options.tokenEvents);
    await checkMasterKey(services, config);
    if (config.bootstrapAdmin) {
      const { username, password } = config.bootstrapAdmin;
      if (await services.users.bootstrapAdmin(username, password, SYSTEM_CONTEXT)) logger.info({ username }, 'bootstrap admin created');
    } else if (options.createFirstAdmin) {
      await announceFirstAdmin(services, config, logger);
    }
    return services;
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Opens the stored secrets the service needs (the active signing key, created here on a new
 * database, and the appkey changed longest ago) so that a wrong MASTER_KEY stops the start with a
 * message naming the variables, rather than a crypto error at start or at a key's first exchange.
 */
async function checkMasterKey(services: Services, config: Config): Promise<void> {
  try {
    await services.signingKeys.initialise();
    await services.apiKeys.checkAppkeysOpen();
  } catch (err) {
    if (!(err instanceof UnopenableSecretError)) throw err;
    const refusal = config.masterKeyPrevious
      ? 'open under neither MASTER_KEY nor MASTER_KEY_PREVIOUS'
      : config.masterKey
        ? 'do not open under MASTER_KEY'
        : `do not open under the key in ${config.dataDir}/master.key (MASTER_KEY is not set)`;
    throw new Error(
      `MASTER_KEY: the secrets stored in the database ${refusal}. Set MASTER_KEY to the key they were sealed ` +
        'with; while rotating, set MASTER_KEY to the new key and MASTER_KEY_PREVIOUS to the old one, then run `npm run cli -- keys rewrap`.',
    );
  }
}

/**
 * With no users and no BOOTSTRAP_ADMIN_* variables, makes an admin with a generated password and
 * shows it once on the terminal, never through the logger (logs are often shipped and kept).
 */
async function announceFirstAdmin(services: Services, config: Config, logger: Logger): Promise<void> {
  if (config.env === 'production' && !process.stderr.isTTY) {
    if (!(await services.users.anyExist())) logger.warn('no users exist; create an admin with: npm run cli -- users add <name> --role admin');
    return;
  }
  const admin = await services.users.createFirstAdmin(SYSTEM_CONTEXT);
  if (!admin) return;
  process.stderr.write(
    [
      '',
      '  No users existed, so an admin was created. This password is shown only once:',
      `    username: ${admin.username}`,
      `    password: ${admin.password}`,
      '  Change it with: npm run cli -- users set-password admin',
      '',
      '',
    ].join('\n'),
  );
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
