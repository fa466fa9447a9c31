import type { Config } from './config';
import type { Logger } from './logger';
import { openDatabase } from './db/open';
import { migrate } from './db/migrate';
import { resolveMasterKey } from './crypto/master-key';
import { createServices, type Services } from './services';

/**
 * Everything the server and the command line share: database open and migrated, master key
 * resolved, services built, a signing key present, the bootstrap admin created.
 */
export async function startRuntime(config: Config, logger: Logger): Promise<Services> {
  if (config.bcryptCost < 10) logger.warn({ cost: config.bcryptCost }, 'BCRYPT_COST below 10 is only fit for tests');
  const db = await openDatabase(config, logger);
  try {
    await migrate(db, logger);
    const services = createServices(config, db, await resolveMasterKey(config, logger));
    await services.signingKeys.initialise();
    if (config.bootstrapAdmin) {
      const { username, password } = config.bootstrapAdmin;
      if (await services.users.bootstrapAdmin(username, password)) logger.info({ username }, 'bootstrap admin created');
    }
    return services;
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}
