import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Database, Queryable } from './database';
import type { Logger } from '../logger';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../migrations');

// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_ID = 7_240_611;

/** The migrations of `dir` in the order they apply: migrations/NNNN_*.sql by name. */
export async function migrationFiles(dir = MIGRATIONS_DIR): Promise<string[]> {
  return (await readdir(dir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
}

/**
 * Applies the pending migrations/NNNN_*.sql in order, each recorded in schema_migrations, all in one
 * transaction: a failure leaves none of them applied. A transaction-scoped advisory lock makes
 * concurrent starts wait for each other; the later ones then find nothing left to apply.
 *
 * `runtimeRole`, when the service runs as a role other than the one migrating: the migrations read it
 * (the setting apikeys.runtime_role, for this transaction), and once they are applied it is granted
 * what the service needs (grant_runtime_privileges, migration 0012), so the grants follow the
 * configured role on every run, even one with nothing to apply.
 */
export async function migrate(db: Database, logger: Logger, dir = MIGRATIONS_DIR, runtimeRole?: string): Promise<string[]> {
  const files = await migrationFiles(dir);
  const applied: string[] = [];
  await db.withTransaction(async (tx) => {
    // Transaction-scoped lock: released by COMMIT/ROLLBACK even if this process dies.
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    await tx.query(`SELECT set_config('apikeys.runtime_role', $1, true)`, [runtimeRole ?? '']);
    // Looked up before creating: CREATE TABLE IF NOT EXISTS needs the CREATE privilege even when the
    // table exists, which the least-privileged runtime role lacks (it starts fine with nothing pending).
    const { rows } = await tx.query<{ exists: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS exists`);
    if (!rows[0]?.exists) {
      await tx.query(
        `CREATE TABLE schema_migrations (
           name text PRIMARY KEY,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
    }
    const done = new Set((await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.query(await readFile(path.join(dir, file), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      applied.push(file);
      logger.info({ migration: file }, 'migration applied');
    }
    if (runtimeRole) await grantRuntimePrivileges(tx, runtimeRole);
  });
  return applied;
}

/**
 * The grants of migration 0012, to the configured runtime role: only when migrating as another role
 * (the runtime role itself may not grant), and where that migration is in the set.
 */
async function grantRuntimePrivileges(tx: Queryable, runtimeRole: string): Promise<void> {
  const { rows } = await tx.query<{ present: boolean; itself: boolean }>(
    `SELECT to_regprocedure('grant_runtime_privileges(text)') IS NOT NULL AS present, current_user = $1 AS itself`,
    [runtimeRole],
  );
  if (rows[0]?.present && !rows[0].itself) await tx.query('SELECT grant_runtime_privileges($1)', [runtimeRole]);
}
