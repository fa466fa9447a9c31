import { z } from 'zod';

const envelopeMeta = z
  .strictObject({
    code: z.int32().meta({ format: 'int32', description: 'Equals the HTTP status.' }),
    count: z.int32().min(0).meta({ format: 'int32', description: 'Number of records in `data`.' }),
  })
  .meta({ readOnly: true });

/** The response envelope of every route that returns records: `{meta, data}`, nothing else. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.strictObject({ meta: envelopeMeta, data });
}

export type Envelope<T> = { meta: z.output<typeof envelopeMeta>; data: T };

/** `meta.code` mirrors the HTTP status; `meta.count` is the number of records in `data`. */
export function envelope<T>(code: number, data: T): Envelope<T> {
  return { meta: { code, count: Array.isArray(data) ? data.length : 1 }, data };
}
