import type { SecretBox } from '../crypto/secretbox';
import type { Queryable } from './database';

/** A column that holds values sealed by the SecretBox, as its component describes it (SQL names written in code, never from input). */
export interface SealedColumn {
  /** What the values are, for a message: "appkeys". */
  what: string;
  table: string;
  column: string;
  /** The column holding each value's associated data. */
  associatedData: string;
  /** Only the values still in use, when the table keeps others (an SQL condition on the table). */
  inUse?: string;
}

/** How many stored secrets each key sealed. */
export interface SealedCensus {
  total: number;
  underCurrent: number;
  underPrevious: number;
  /** Sealed under neither configured key (or not opening under either): what the start refuses. */
  unopenable: number;
  /** In the first format, which names no key: each was opened to be counted (`keys rewrap` updates them). */
  legacy: number;
}

/**
 * Counts every secret in `columns` by the key that sealed it. Values in the current format name their
 * key in their header, so they are counted by one grouped query per column without being opened;
 * values in the first format are opened one by one.
 */
export async function takeSealedCensus(q: Queryable, box: SecretBox, columns: readonly SealedColumn[]): Promise<SealedCensus> {
  const census: SealedCensus = { total: 0, underCurrent: 0, underPrevious: 0, unopenable: 0, legacy: 0 };
  const count = (under: 'current' | 'previous' | 'other', n: number) => {
    census.total += n;
    if (under === 'current') census.underCurrent += n;
    else if (under === 'previous') census.underPrevious += n;
    else census.unopenable += n;
  };
  for (const c of columns) {
    const where = `${c.column} IS NOT NULL${c.inUse ? ` AND (${c.inUse})` : ''}`;
    const { rows: heads } = await q.query<{ head: Buffer; n: number }>(
      `SELECT substring(${c.column} FROM 1 FOR 9) AS head, count(*)::int AS n
         FROM ${c.table} WHERE ${where} AND get_byte(${c.column}, 0) = 2 GROUP BY 1`,
    );
    for (const { head, n } of heads) {
      const under = box.sealedUnder(head);
      count(under === 'legacy' ? 'other' : under, n);
    }
    const { rows: legacy } = await q.query<{ sealed: Buffer; aad: string }>(
      `SELECT ${c.column} AS sealed, ${c.associatedData} AS aad FROM ${c.table} WHERE ${where} AND get_byte(${c.column}, 0) <> 2`,
    );
    census.legacy += legacy.length;
    for (const { sealed, aad } of legacy) {
      try {
        count(box.openReporting(sealed, aad).under, 1);
      } catch {
        count('other', 1);
      }
    }
  }
  return census;
}
