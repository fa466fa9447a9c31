import { config as loadDotenv } from 'dotenv';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { startRuntime } from '../runtime';
import { runKeysCommand, KEYS_USAGE } from './keys.command';
import { runUsersCommand, USERS_USAGE } from './users.command';

const USAGE = `Usage: npm run cli -- <command>\n\n${USERS_USAGE}\n${KEYS_USAGE}`;

/** `npm run cli -- users …` and `npm run cli -- keys rotate|rewrap`, against the configured database. */
async function run(argv: string[]): Promise<void> {
  const [group, ...rest] = argv;
  if (group !== 'users' && group !== 'keys') {
    console.log(USAGE);
    process.exitCode = group === undefined || group === '--help' ? 0 : 2;
    return;
  }
  loadDotenv({ quiet: true });
  const config = loadConfig();
  // Operational messages (migrations, warnings) go to stderr; stdout carries only the result.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr as never);
  const services = await startRuntime(config, logger);
  try {
    const output =
      group === 'users' ? await runUsersCommand(services.users, rest) : await runKeysCommand(services, rest);
    console.log(output);
  } finally {
    await services.db.close();
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
