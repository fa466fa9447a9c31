import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../logger';

const FILE_NAME = 'master.key';

/**
 * The configured MASTER_KEY, or one kept in DATA_DIR (generated on first start) for local use.
 * Production never gets here without MASTER_KEY: loadConfig refuses that.
 */
export async function resolveMasterKey(config: Config, logger: Logger): Promise<Buffer> {
  if (config.masterKey) return config.masterKey;
  const file = path.resolve(config.dataDir, FILE_NAME);
  try {
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
    logger.warn({ file }, 'MASTER_KEY is not set; using the key kept in the data folder (set MASTER_KEY in production)');
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // 'wx' fails if another process created it meanwhile; then we read theirs.
  try {
    await writeFile(file, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return resolveMasterKey(config, logger);
    throw err;
  }
  logger.warn({ file }, 'MASTER_KEY is not set; generated a new one in the data folder. Back it up with the database.');
  return key;
}
