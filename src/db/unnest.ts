/**
 * A batch of items goes to PostgreSQL as one array parameter per column and comes back as rows
 * through unnest: one statement for many items, with a fixed number of parameters.
 */
export interface UnnestColumn<T> {
  name: string;
  /** The element type, e.g. `uuid` (the parameter is `uuid[]`). */
  type: string;
  of: (item: T) => unknown;
}

/** The rows of the batch, with `ord` their 1-based position in it. */
export const unnestRows = <T>(columns: UnnestColumn<T>[]): string =>
  `SELECT * FROM unnest(${columns.map(({ type }, i) => `$${i + 1}::${type}[]`).join(', ')}) WITH ORDINALITY
       AS batch(${columns.map(({ name }) => name).join(', ')}, ord)`;

/** The parameters of unnestRows for these items. */
export const unnestValues = <T>(columns: UnnestColumn<T>[], items: T[]): unknown[][] => columns.map(({ of }) => items.map(of));
