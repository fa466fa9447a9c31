/**
 * A row read beside another in one statement (a LEFT JOIN): its columns under a prefix, so they
 * never clash with the other row's (`key_id` beside `id`), and each null when there was no row.
 */
export type Prefixed<T, P extends string> = { [K in keyof T as `${P}${K & string}`]: T[K] | null };
