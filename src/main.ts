import { config as loadDotenv } from 'dotenv';
import { ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import { startServer } from './server';

/** Loads the configuration, starts the service, and stops it gracefully on SIGTERM or SIGINT (exit 0). */
async function main(): Promise<void> {
  loadDotenv({ quiet: true });
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const running = await startServer(config, logger, { createFirstAdmin: true });
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    void running.stop().finally(() => {
      logger.info('stopped');
      logger.flush();
      process.exit(0);
    });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error(`Failed to start: ${err instanceof Error ? err.message : String(err)}`);
  }
  process.exit(1);
});
