import { preparedStatement, UNIQUE_VIOLATION, type Queryable } from '../db/database';
import { conflict } from '../shared/errors';
import type { Role } from '../shared/principals';
import { previousAppkeyValid, previousGeneration } from '../sessions/appkey-generations';
import type { SealedColumn } from '../db/sealed-secrets';
import { policyColumns, type PolicyRow } from '../key-policies/policy-sql';

export interface ApiKeyRow {
  id: string;
  appname: string;
  description: string;
  role: Role | null;
  last_login: number | null;
  last_ip: string | null;
}

/** What an exchange needs of a key row: which key, its sealed appkeys, and its policy. */
export interface ApiKeySecretRow extends PolicyRow {
  id: string;
  key_generation: number;
  key_ciphertext: Buffer;
  /** The appkey before the last regen, only while its grace lasts. */
  previous_key_ciphertext: Buffer | null;
  previous_key_generation: number;
}

// last_login is a bigint, which pg returns as a string; as float8 (exact for Unix seconds) it is a number.
const COLUMNS = 'id, appname, description, role, last_login::float8 AS last_login, last_ip';

const FIND_SECRET_BY_APPNAME = preparedStatement(
  'api-keys.find-secret',
  `SELECT id, key_generation, key_ciphertext,
          CASE WHEN ${previousAppkeyValid('api_keys')} THEN previous_key_ciphertext END AS previous_key_ciphertext,
          ${previousGeneration('api_keys')} AS previous_key_generation,
          ${policyColumns('api_keys')}
     FROM api_keys WHERE appname = $1`,
);
/** A listed key: appname, description, role, last login, last IP (the columns of LIST, in order). */
export type ListedApiKey = [appname: string, description: string, role: Role | null, lastLogin: number | null, lastIp: string | null];

/**
 * A page of keys, as arrays: for 1000 keys PostgreSQL returns plain rows for a fraction of what
 * building the JSON itself costs it, and Node reads arrays for less than objects (docs/performance.md,
 * "list"). COALESCE rather than "$1 IS NULL OR": the condition stays an index range under a generic
 * plan (appnames are never empty, so '' sorts before all of them).
 */
const LIST = preparedStatement(
  'api-keys.list',
  `SELECT appname, description, role, last_login::float8, last_ip FROM api_keys
    WHERE appname > COALESCE($1::text, '')
    ORDER BY appname
    LIMIT $2`,
  { rowMode: 'array' },
);

/**
 * LIST narrowed to the appnames that start with $2: those from $2 (inclusive) up to $3, the
 * prefix's successor (exclusive), see prefixEnd. A range rather than LIKE: `_` is a LIKE wildcard,
 * and a LIKE pattern that is a parameter is no index condition under a generic plan, so once
 * PostgreSQL switches this statement to one it would read every key after `after`. The range is
 * one index range on the primary key under any plan, in the column's collation ("C", byte order,
 * the order of the list and of prefixEnd).
 */
const LIST_WITH_PREFIX = preparedStatement(
  'api-keys.list-with-prefix',
  `SELECT appname, description, role, last_login::float8, last_ip FROM api_keys
    WHERE appname > COALESCE($1::text, '') AND appname >= $2::text AND appname < $3::text
    ORDER BY appname
    LIMIT $4`,
  { rowMode: 'array' },
);

/**
 * The least string after every string that starts with `prefix`, in byte order: the prefix with its
 * last character's code one higher ("ab" → "ac", "a_" → "a`", "az" → "a{"). Exact for any stored
 * appname, as the schema lets only ASCII prefixes through (so that code is ASCII too, at most "{").
 */
function prefixEnd(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  // NaN for "": a range that would silently list nothing (or everything) must not reach SQL.
  if (!(last < 0x7f)) throw new Error('an appname prefix must be non-empty ASCII');
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

export async function insertApiKey(
  q: Queryable,
  key: { appname: string; description: string; role: Role | null; keyDigest: Buffer; keyCiphertext: Buffer },
): Promise<ApiKeyRow> {
  try {
    const { rows } = await q.query<ApiKeyRow>(
      `INSERT INTO api_keys (appname, description, role, key_digest, key_ciphertext)
       VALUES ($1, $2, $3, $4, $5)
       RETURNING ${COLUMNS}`,
      [key.appname, key.description, key.role, key.keyDigest, key.keyCiphertext],
    );
    return rows[0]!;
  } catch (err) {
    if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw conflict(`API key "${key.appname}" already exists`);
    throw err;
  }
}

export async function findApiKeyByAppname(q: Queryable, appname: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await q.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE appname = $1`, [appname]);
  return rows[0];
}

/** The key named `appname`, with the sealed appkeys a request-token check needs. */
export async function findApiKeySecretByAppname(q: Queryable, appname: string): Promise<ApiKeySecretRow | undefined> {
  const { rows } = await q.queryPrepared<ApiKeySecretRow>(FIND_SECRET_BY_APPNAME, [appname]);
  return rows[0];
}

/** Locks the row for the rest of the transaction, so a check-then-write cannot race. */
export async function findApiKeyForUpdate(q: Queryable, appname: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await q.query<ApiKeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE appname = $1 FOR UPDATE`,
    [appname],
  );
  return rows[0];
}

/**
 * Keys ordered by appname in byte order (the column's collation is "C"), strictly after `after` when
 * given, only those starting with `prefix` when given (a non-empty ASCII string, as the schema
 * checks). Without a prefix the statement is LIST, unchanged, as the list benchmark measured it.
 */
export async function listApiKeys(q: Queryable, page: { limit: number; after?: string; prefix?: string }): Promise<ListedApiKey[]> {
  const after = page.after ?? null;
  const { rows } =
    page.prefix === undefined
      ? await q.queryPrepared<ListedApiKey>(LIST, [after, page.limit])
      : await q.queryPrepared<ListedApiKey>(LIST_WITH_PREFIX, [after, page.prefix, prefixEnd(page.prefix), page.limit]);
  return rows;
}

export async function updateApiKeyContent(
  q: Queryable,
  appname: string,
  content: { description: string; role: Role | null },
): Promise<ApiKeyRow> {
  const { rows } = await q.query<ApiKeyRow>(
    `UPDATE api_keys SET description = $2, role = $3, updated_at = now()
      WHERE appname = $1
      RETURNING ${COLUMNS}`,
    [appname, content.description, content.role],
  );
  return rows[0]!;
}

/**
 * Installs a new appkey as the next generation. With a grace, the current appkey stays valid as the
 * previous one until then; any older previous appkey is dropped, so at most two are ever valid.
 */
export async function replaceApiKeySecret(
  q: Queryable,
  appname: string,
  content: { description: string; role: Role | null; keyDigest: Buffer; keyCiphertext: Buffer; graceSeconds: number },
): Promise<ApiKeyRow & { previous_key_valid_until: Date | null }> {
  const { rows } = await q.query<ApiKeyRow & { previous_key_valid_until: Date | null }>(
    `UPDATE api_keys
        SET description = $2, role = $3, key_digest = $4, key_ciphertext = $5, updated_at = now(),
            key_generation = key_generation + 1,
            previous_key_ciphertext = CASE WHEN $6::int > 0 THEN key_ciphertext END,
            previous_key_digest = CASE WHEN $6::int > 0 THEN key_digest END,
            previous_key_valid_until = CASE WHEN $6::int > 0 THEN clock_timestamp() + make_interval(secs => $6::int) END
      WHERE appname = $1
      RETURNING ${COLUMNS}, previous_key_valid_until`,
    [appname, content.description, content.role, content.keyDigest, content.keyCiphertext, content.graceSeconds],
  );
  return rows[0]!;
}

/** Forgets previous appkeys whose grace is over: they can no longer verify anything. */
export async function clearEndedGraces(q: Queryable, batchSize: number): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE api_keys SET previous_key_ciphertext = NULL, previous_key_digest = NULL, previous_key_valid_until = NULL
      WHERE id IN (SELECT id FROM api_keys WHERE previous_key_valid_until IS NOT NULL AND NOT ${previousAppkeyValid('api_keys')} LIMIT $1)`,
    [batchSize],
  );
  return rowCount ?? 0;
}

export async function deleteApiKey(q: Queryable, appname: string): Promise<void> {
  await q.query('DELETE FROM api_keys WHERE appname = $1', [appname]);
}

/** Every sealed appkey (current and previous), locked against a concurrent regen until the transaction ends. */
export async function lockSealedAppkeys(
  q: Queryable,
): Promise<Array<{ appname: string; key_ciphertext: Buffer; previous_key_ciphertext: Buffer | null }>> {
  const { rows } = await q.query<{ appname: string; key_ciphertext: Buffer; previous_key_ciphertext: Buffer | null }>(
    'SELECT appname, key_ciphertext, previous_key_ciphertext FROM api_keys ORDER BY appname FOR UPDATE',
  );
  return rows;
}

/** Stores re-sealed appkeys; a null leaves that column as it is. */
export async function updateSealedAppkeys(q: Queryable, appname: string, keyCiphertext: Buffer | null, previousKeyCiphertext: Buffer | null): Promise<void> {
  await q.query(
    `UPDATE api_keys
        SET key_ciphertext = COALESCE($2, key_ciphertext),
            previous_key_ciphertext = COALESCE($3, previous_key_ciphertext)
      WHERE appname = $1`,
    [appname, keyCiphertext, previousKeyCiphertext],
  );
}

/** The appkeys sealed under MASTER_KEY, each bound to its appname: the current one, and the previous one while its grace lasts. */
export const SEALED_APPKEYS: readonly SealedColumn[] = [
  { what: 'appkeys', table: 'api_keys', column: 'key_ciphertext', associatedData: 'appname' },
  { what: 'appkeys in a grace', table: 'api_keys', column: 'previous_key_ciphertext', associatedData: 'appname', inUse: previousAppkeyValid('api_keys') },
];
