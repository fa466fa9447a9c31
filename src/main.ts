import { config as loadDotenv } from 'dotenv';
import { ConfigError, loadConfig, type Config } from './config';
import { createLogger, type Logger } from './logger';
import { PATHS } from './shared/paths';
import { startServer } from './server';

/** Loads the configuration, starts the service, and stops it gracefully on SIGTERM or SIGINT (exit 0). */
async function main(): Promise<void> {
  loadDotenv({ quiet: true });
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const running = await startServer(config, logger, { createFirstAdmin: true });
  announcePages(config, logger, running.url);
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

/** The start log's pointer for a person: where the console and the API reference are. */
function announcePages(config: Config, logger: Logger, url: string): void {
  // Listening on every interface, the server names loopback by address; the issuer's default names it localhost.
  const base = url.replace('//127.0.0.1:', '//localhost:');
  const pages = {
    ...(config.console.enabled && { console: `${base}${PATHS.console}/` }),
    ...(config.apiReference.enabled && { apiReference: `${base}${PATHS.apiReference}/` }),
  };
  const names = { console: 'admin console', apiReference: 'API reference' };
  const said = Object.entries(pages).map(([page, at]) => `${names[page as keyof typeof names]} at ${at}`);
  if (said.length) logger.info(pages, `ready: ${said.join(', ')}`);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error(`Failed to start: ${err instanceof Error ? err.message : String(err)}`);
  }
  process.exit(1);
});
