import { Client } from 'pg';
import { sealedHeaderOf } from '../../src/crypto/secretbox';

export const PG_BASE = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';

export const databaseUrl = (name: string) => `${PG_BASE}/${name}`;

async function withClient<T>(db: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: databaseUrl(db) });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export const createDatabase = (name: string) => withClient('postgres', (c) => c.query(`CREATE DATABASE "${name}"`));

export async function dropDatabase(name: string): Promise<void> {
  await withClient('postgres', (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

export const query = <T>(db: string, fn: (c: Client) => Promise<T>) => withClient(db, fn);

/**
 * Tops api_keys up to `total` rows with filler keys inserted in bulk: unique appnames and digests,
 * random-looking ciphertexts (never opened: only the exercised keys, created through the API, are;
 * each starts with the header of a value sealed under `masterKey`, so the start's census of sealed
 * secrets counts them without opening them, as it does a real table), a mix of roles, and a last
 * login, so listed records are realistic.
 */
export async function fillApiKeys(db: string, total: number, masterKey: Buffer): Promise<void> {
  await withClient(db, async (c) => {
    const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM api_keys');
    const missing = total - Number(rows[0]!.n);
    if (missing > 0) {
      await c.query(
        `INSERT INTO api_keys (appname, description, role, key_digest, key_ciphertext, last_login, last_ip)
         SELECT 'filler-' || lpad(g::text, 7, '0'),
                'Filler key number ' || g || ' for the benchmark',
                (ARRAY['viewer', 'editor', NULL])[1 + g % 3],
                sha256(('filler digest ' || g || ' ' || random())::bytea),
                $2::bytea || sha256(('iv ' || g || random())::bytea) || sha256(('ct ' || g || random())::bytea),
                floor(extract(epoch FROM now()))::bigint - g,
                '10.' || (g / 65536) % 256 || '.' || (g / 256) % 256 || '.' || g % 256
           FROM generate_series(1, $1::int) AS g`,
        [missing, sealedHeaderOf(masterKey)],
      );
    }
    await c.query('VACUUM ANALYZE api_keys');
  });
}

/**
 * One live API-key session per key, in one set-based insert (as an API-key exchange opens them): the
 * table a busy deployment carries, 30 minutes of refresh and 10 hours of life left, never revoked.
 */
export async function fillSessions(db: string): Promise<number> {
  return withClient(db, async (c) => {
    const { rowCount } = await c.query(
      `INSERT INTO sessions (id, api_key_id, key_generation, refresh_jti, refresh_expires_at, expires_at)
       SELECT gen_random_uuid(), id, key_generation, gen_random_uuid(), now() + interval '30 minutes', now() + interval '10 hours'
         FROM api_keys`,
    );
    await c.query('VACUUM ANALYZE sessions');
    return rowCount ?? 0;
  });
}

/** The floor refresh path's own sessions table, seeded by the driver with one row per token. */
export async function createFloorSessionsTable(db: string): Promise<void> {
  await withClient(db, (c) =>
    c.query(`CREATE TABLE IF NOT EXISTS bench_floor_sessions (
               id uuid PRIMARY KEY,
               refresh_jti uuid NOT NULL,
               refresh_expires_at timestamptz NOT NULL,
               revoked_at timestamptz
             )`),
  );
}

export async function insertFloorSessions(db: string, sessions: { id: string; jti: string }[]): Promise<void> {
  await withClient(db, (c) =>
    c.query(
      `INSERT INTO bench_floor_sessions (id, refresh_jti, refresh_expires_at)
       SELECT id, jti, now() + interval '30 minutes' FROM unnest($1::uuid[], $2::uuid[]) AS t(id, jti)`,
      [sessions.map((s) => s.id), sessions.map((s) => s.jti)],
    ),
  );
}
