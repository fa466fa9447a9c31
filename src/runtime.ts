import type { Config } from './config';
import type { Logger } from './logger';
import { openDatabase } from './db/open';
import { migrate } from './db/migrate';
import { isDatabaseUnavailable } from './db/database';
import { resolveMasterKey } from './crypto/master-key';
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
    await untilDatabaseAnswers(() => migrate(db, logger), logger);
    const services = createServices(config, db, await resolveMasterKey(config, logger), options.tokenEvents);
    await services.signingKeys.initialise();
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
