import type { Queryable } from '../../../src/db/database';

export interface TableDump {
  table: string;
  rows: number;
  /** Every value of every row rendered as text: JSON of the row, and each bytea as hex, utf8, latin1 and base64. */
  text: string;
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

function renderValue(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (Buffer.isBuffer(value)) {
    return [value.toString('hex'), value.toString('utf8'), value.toString('latin1'), value.toString('base64')];
  }
  if (value instanceof Date) return [value.toISOString()];
  if (typeof value === 'object') return [JSON.stringify(value)];
  return [String(value)];
}

/** The base tables of the connection's current schema (the test file's own schema). */
export async function tablesOfCurrentSchema(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
      ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

/** Every row of every table of the current schema, as searchable text. */
export async function dumpCurrentSchema(db: Queryable): Promise<TableDump[]> {
  const dumps: TableDump[] = [];
  for (const table of await tablesOfCurrentSchema(db)) {
    // row_to_json renders bytea as \x-hex; the row read through pg gives Buffers for the other renderings.
    const { rows } = await db.query<Record<string, unknown>>(
      `SELECT row_to_json(t)::text AS __json, t.* FROM ${quoteIdent(table)} t`,
    );
    const parts: string[] = [];
    for (const row of rows) for (const value of Object.values(row)) parts.push(...renderValue(value));
    dumps.push({ table, rows: rows.length, text: parts.join('\n') });
  }
  return dumps;
}
