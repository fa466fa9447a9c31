import type { Database, Queryable } from './db/database';
import type { Logger } from './logger';
import { deleteExpiredRequestTokenJtis } from './tokens/request-token-replay.repository';
import { deleteEndedSessions } from './sessions/pruning';
import { clearEndedGraces } from './api-keys/api-keys.repository';
import { pruneAuditEvents } from './audit-trail/audit-trail';
import { disableIdleApiKeys, recordExpiredApiKeys } from './api-keys/key-switches';
import { systemClock, type Clock } from './key-policies/policy';
import { SYSTEM_CONTEXT } from './shared/audit-context';
import { pruneFinishedDeliveries } from './webhooks/deliveries.repository';
import { deleteSpentDpopProofs } from './dpop/proof-replay';
import { pruneUsage } from './usage/usage.repository';

/** Rows one batch deletes at most: a large backlog is pruned in short transactions that never hold many row locks. */
export const PRUNING_BATCH_SIZE = 1_000;

// Any constant works; it only has to be the same for every instance of this service (and differ
// from the migration and signing-key locks).
const MAINTENANCE_LOCK_ID = 7_240_613;

export interface MaintenanceSettings {
  intervalSeconds: number;
  /** Replay records are kept this long past their token's exp (CLOCK_TOLERANCE). */
  clockTolerance: number;
  /** Delivered and failed webhook messages are kept this many days (WEBHOOK_RETENTION_DAYS). */
  webhookRetentionDays: number;
  /** Usage counts are kept this many days (USAGE_RETENTION_DAYS); 400 when omitted. */
  usageRetentionDays?: number;
  /** The key policies' clock, for the idle rule and expiries (default: the system's). */
  clock?: Clock;
}

export type PruningJob = 'idleKeys' | 'expiredKeys' | 'replayRecords' | 'dpopProofs' | 'sessions' | 'graces' | 'auditEvents' | 'webhookDeliveries' | 'usage';

export interface MaintenanceReport {
  /**
   * True when another instance held the maintenance lock: this instance stopped its round there and
   * leaves the rest to that one.
   */
  skipped: boolean;
  /** Rows each batch deleted (cleared, for graces; keys turned off or recorded expired, for the key jobs), per job, in the order they ran. */
  batches: Record<PruningJob, number[]>;
}

type Prune = (tx: Queryable, batchSize: number) => Promise<number>;

function jobsOf(settings: MaintenanceSettings): [PruningJob, Prune][] {
  const now = settings.clock ?? systemClock;
  return [
    // First, so that the sessions the idle rule ends are pruned in the same round.
    ['idleKeys', (tx, n) => disableIdleApiKeys(tx, n, now())],
    ['expiredKeys', (tx, n) => recordExpiredApiKeys(tx, SYSTEM_CONTEXT, n, now())],
    ['replayRecords', (tx, n) => deleteExpiredRequestTokenJtis(tx, settings.clockTolerance, n)],
    ['dpopProofs', (tx, n) => deleteSpentDpopProofs(tx, settings.clockTolerance, n)],
    ['sessions', (tx, n) => deleteEndedSessions(tx, n)],
    ['graces', (tx, n) => clearEndedGraces(tx, n)],
    // The retention is the database's (written at start as the schema owner), not this instance's:
    // with a retention of 0 the function deletes nothing and the batch comes back 0.
    ['auditEvents', (tx, n) => pruneAuditEvents(tx, n)],
    ['webhookDeliveries', (tx, n) => pruneFinishedDeliveries(tx, settings.webhookRetentionDays, n)],
    ['usage', (tx, n) => pruneUsage(tx, settings.usageRetentionDays ?? 400, n)],
  ];
}

/**
 * One round: keys idle past their policy's rule turned off, keys past their expiry recorded
 * (api_key.expired, once each), then pruning of spent replay records (of request tokens and of DPoP
 * proofs), ended sessions, ended graces, audit events past their retention and finished webhook
 * messages past theirs, and usage counts past USAGE_RETENTION_DAYS, each in batches of at most `batchSize` rows until a batch comes back short. Each
 * batch is its own transaction and first takes a transaction-scoped advisory lock (which works
 * through PgBouncer's transaction pooling, unlike a session lock): when another instance holds it,
 * this round stops, so N instances never prune the same rows at once and most rounds cost the others
 * one statement.
 */
export async function runMaintenance(
  db: Database,
  settings: MaintenanceSettings,
  options: { batchSize?: number; stopping?: () => boolean } = {},
): Promise<MaintenanceReport> {
  const batchSize = options.batchSize ?? PRUNING_BATCH_SIZE;
  const report: MaintenanceReport = {
    skipped: false,
    batches: { idleKeys: [], expiredKeys: [], replayRecords: [], dpopProofs: [], sessions: [], graces: [], auditEvents: [], webhookDeliveries: [], usage: [] },
  };
  for (const [job, prune] of jobsOf(settings)) {
    for (;;) {
      if (options.stopping?.()) return report;
      const deleted = await db.withTransaction(async (tx) => {
        const { rows } = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [MAINTENANCE_LOCK_ID]);
        return rows[0]!.locked ? prune(tx, batchSize) : undefined;
      });
      if (deleted === undefined) return { ...report, skipped: true };
      report.batches[job].push(deleted);
      if (deleted < batchSize) break;
    }
  }
  return report;
}

/**
 * Runs a round every `intervalSeconds`, the next one timed from the end of the last, so rounds of one
 * instance never overlap. Returns a stop function that lets a round in flight finish its batch.
 */
export function startMaintenance(db: Database, logger: Logger, settings: MaintenanceSettings): () => Promise<void> {
  let stopped = false;
  let round: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(() => {
      round = runMaintenance(db, settings, { stopping: () => stopped })
        .then(({ skipped, batches }) => {
          const pruned = Object.fromEntries(Object.entries(batches).map(([job, counts]) => [job, counts.reduce((a, b) => a + b, 0)]));
          if (skipped || Object.values(pruned).some(Boolean)) logger.debug({ skipped, pruned }, 'pruned expired records');
        })
        .catch((err: Error) => logger.warn({ cause: err.message }, 'pruning expired records failed'))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, settings.intervalSeconds * 1000);
    timer.unref();
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await round;
  };
}
