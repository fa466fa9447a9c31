/**
 * Measures the audit trail's size on disk per event, so operators can choose AUDIT_RETENTION_DAYS:
 * migrates a fresh schema, inserts N `token.issued` events shaped as the service writes them (half
 * by API keys through POST /api/v1/auth/token, half by users through the password and refresh
 * routes), and prints pg_total_relation_size (table, indexes and TOAST) per event and per day at a
 * few token rates. The schema is dropped at the end.
 *
 *   npx tsx scripts/audit-size.ts [events, default 100000]
 *
 * Against DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Database } from '../src/db/database';
import { migrate } from '../src/db/migrate';
import { createLogger } from '../src/logger';

async function main(): Promise<void> {
  const events = Number(process.argv[2] ?? 100_000);
  if (!Number.isInteger(events) || events < 1) throw new Error(`events: expected a positive integer, got ${process.argv[2]}`);
  const server = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `audit_size_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(server);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const db = new Database({ url: url.toString(), poolSize: 1, statementTimeoutMs: 600_000 }, createLogger('silent'));
  try {
    await migrate(db, createLogger('silent'));
    // As the service writes them: a 20-character appname or username, an IPv4 client address, a
    // request id (UUID), the route and the session id in details.
    await db.query(
      `INSERT INTO audit_events (occurred_at, type, actor, appname, username, client_address, request_id, details)
       SELECT now() - make_interval(secs => $1 - i), 'token.issued',
              CASE WHEN i % 2 = 0 THEN 'api_key:' ELSE 'user:' END || name,
              CASE WHEN i % 2 = 0 THEN name END,
              CASE WHEN i % 2 = 1 THEN name END,
              '198.51.100.' || (i % 250), gen_random_uuid()::text,
              jsonb_build_object('route', CASE WHEN i % 2 = 0 THEN '/api/v1/auth/token' WHEN i % 4 = 1 THEN '/api/auth/bearer/token' ELSE '/api/auth/bearer/refresh' END,
                                 'session_id', gen_random_uuid())
         FROM generate_series(1, $1) AS i, LATERAL (SELECT 'client-' || lpad((i % 5000)::text, 13, '0') AS name) AS n`,
      [events],
    );
    await db.query('VACUUM ANALYZE audit_events');
    const { rows } = await db.query<{ total: string; heap: string; indexes: string; n: string }>(
      `SELECT pg_total_relation_size('audit_events') AS total, pg_relation_size('audit_events') AS heap,
              pg_indexes_size('audit_events') AS indexes, count(*) AS n FROM audit_events`,
    );
    const { total, heap, indexes, n } = rows[0]!;
    const perEvent = Number(total) / Number(n);
    const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;
    process.stdout.write(
      [
        `${Number(n).toLocaleString('en-US')} events: ${mib(Number(total))} in all (table ${mib(Number(heap))}, indexes ${mib(Number(indexes))})`,
        `per event: ${Math.round(perEvent)} bytes`,
        ...[1, 10, 100].map((rate) => {
          const perDay = perEvent * rate * 86_400;
          return `at ${rate} token(s)/s: ${gib(perDay)} per day, ${gib(perDay * 400)} for the default 400 days`;
        }),
      ].join('\n') + '\n',
    );
  } finally {
    await db.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
