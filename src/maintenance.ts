import type { Database } from './db/database';
import type { Logger } from './logger';
import { deleteExpiredRequestTokenJtis } from './tokens/request-token-replay.repository';
import { deleteEndedSessions } from './sessions/pruning';
import { clearEndedGraces } from './api-keys/api-keys.repository';

const EVERY_MS = 60_000;

/**
 * Periodically forgets replay records, sessions and previous appkeys that can no longer matter.
 * Returns a stop function.
 */
export function startMaintenance(db: Database, logger: Logger, clockTolerance: number): () => void {
  const timer = setInterval(() => {
    Promise.all([deleteExpiredRequestTokenJtis(db, clockTolerance), deleteEndedSessions(db), clearEndedGraces(db)])
      .then(([jtis, sessions, appkeys]) => {
        if (jtis || sessions || appkeys) logger.debug({ jtis, sessions, appkeys }, 'pruned expired records');
      })
      .catch((err: Error) => logger.warn({ cause: err.message }, 'pruning expired records failed'));
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
