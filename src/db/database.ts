import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { Logger } from '../logger';

type Result<R> = Promise<{ rows: R[]; rowCount: number | null }>;

/** A hot-path statement with a name: PostgreSQL plans it once per connection, not on every call. */
export interface PreparedStatement {
  name: string;
  text: string;
  /** Rows as arrays of values in column order, not objects: cheaper for Node when there are many. */
  rowMode?: 'array';
}

export const preparedStatement = (name: string, text: string, options: { rowMode?: 'array' } = {}): PreparedStatement => ({ name, text, ...options });

/** Anything that runs a parameterised statement: the pool, or a client inside a transaction. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Result<R>;
  /** A statement PostgreSQL keeps planned per connection (where named statements work; see Database). */
  queryPrepared<R extends QueryResultRow = QueryResultRow>(statement: PreparedStatement, values: unknown[]): Result<R>;
}

export interface DatabaseOptions {
  url: string;
  poolSize?: number;
  /** Upper bound for one statement, so a stuck query cannot hold a connection forever. */
  statementTimeoutMs?: number;
  connectionTimeoutMs?: number;
  /**
   * `transaction`: a pooler (PgBouncer, `pool_mode = transaction`) may hand each transaction another
   * server connection, so nothing is left on a connection: no named prepared statements and no
   * settings (statement_timeout then comes from the role's own settings; the client-side bound stays).
   */
  pooling?: 'session' | 'transaction';
}

/** Connections of the pool: open in all, idle among them, and requests waiting for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export class Database implements Queryable {
  private readonly pool: Pool;
  private namedStatements: boolean;

  constructor(
    options: DatabaseOptions,
    private readonly logger: Logger,
    /** Runs after the pool has closed (stops an embedded server). */
    private readonly afterClose?: () => Promise<void>,
  ) {
    const statementTimeoutMs = options.statementTimeoutMs ?? 10_000;
    const perConnectionState = options.pooling !== 'transaction';
    this.namedStatements = perConnectionState;
    const settings: Record<string, string> = {
      statement_timeout: String(statementTimeoutMs),
      // `?options=-c name=value` of the URL, e.g. the search_path tests use to select their schema.
      ...settingsFromUrl(options.url),
    };
    const names = Object.keys(settings);
    const apply = `SELECT version() AS version, ${names.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, false)`).join(', ')}`;
    const values = names.flatMap((name) => [name, settings[name]]);
    this.pool = new Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
      // The server enforces statement_timeout; this client-side bound covers a server that has
      // gone silent (network cut), which would otherwise hold the connection forever.
      query_timeout: statementTimeoutMs + 2_000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      // Settings go through set_config, not startup options, which PGlite ignores. PGlite also gives
      // all connections one session, where a second PREPARE of a name fails: no named statements there.
      // The pool awaits this before handing the connection out.
      onConnect: perConnectionState
        ? async (client) => {
            const { rows } = await client.query<{ version: string }>(apply, values);
            if (rows[0]?.version.includes('PGlite')) this.namedStatements = false;
          }
        : undefined,
    });
    // An idle client losing its server connection must not crash the process.
    this.pool.on('error', (err) => logger.warn({ err: { message: err.message } }, 'idle database connection failed'));
  }

  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]) {
    return this.pool.query<R>(text, values);
  }

  queryPrepared<R extends QueryResultRow = QueryResultRow>(statement: PreparedStatement, values: unknown[]) {
    return this.pool.query<R>(this.config(statement, values));
  }

  private config(statement: PreparedStatement, values: unknown[]) {
    return this.namedStatements ? { ...statement, values } : { text: statement.text, rowMode: statement.rowMode, values };
  }

  /** Runs fn inside BEGIN/COMMIT on one client; any throw rolls back. Pass `tx` down, never the pool. */
  async withTransaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    let broken = false;
    // A checked-out client has no error listener of the pool's: if its connection dies between two
    // statements, an unheard 'error' event would crash the process. Mark it broken instead.
    const onError = (err: Error) => {
      broken = true;
      this.logger.warn({ cause: err.message }, 'database connection failed during a transaction');
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await fn({
        query: (text, values) => client.query(text, values),
        queryPrepared: (statement, values) => client.query(this.config(statement, values)),
      });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // A connection that failed (or timed out) must not go back to the pool to fail again later.
      broken = isDatabaseUnavailable(err);
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  /** The pool's connection counts, read-only (for metrics). */
  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
    await this.afterClose?.();
  }
}

/** True for errors that mean "the database is not reachable right now" rather than a bug. */
export function isDatabaseUnavailable(err: unknown): boolean {
  // Duck-typed: errors from Node's network layer need not be instances of this realm's Error.
  if (typeof err !== 'object' || err === null) return false;
  const { code, message, severity } = err as { code?: unknown; message?: unknown; severity?: unknown };
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH'].includes(code)) return true;
    // 08xxx connection exceptions, 57P0x operator intervention (shutdown), 53300 too many connections.
    if (code.startsWith('08') || code.startsWith('57P') || code === '53300') return true;
    // A database closed to connections (ALLOW_CONNECTIONS false) refuses the connection itself: FATAL.
    // An ERROR of the same class would be a statement's fault, not an outage. (The driver gives the
    // severity as the server wrote it, in English unless lc_messages says otherwise.)
    if (code === '55000' && severity === 'FATAL') return true;
  }
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|Connection ended/i.test(
    typeof message === 'string' ? message : '',
  );
}

export const UNIQUE_VIOLATION = '23505';

/** `-c name=value` (or `--name=value`) pairs from a connection URL's `options` parameter. */
function settingsFromUrl(url: string): Record<string, string> {
  const options = new URL(url).searchParams.get('options') ?? '';
  return Object.fromEntries([...options.matchAll(/(?:-c\s*|--)([\w.]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}
