import { z } from 'zod';

/** RFC 7009's answer: the same empty object whether or not the key existed. */
export const selfRevocationResponse = z.strictObject({}).meta({ description: 'Always empty: the answer does not tell whether the key existed.' });

/** GitHub's answer format: one entry per reported token, in the order reported. */
export const secretScanningAnswer = z.array(
  z.strictObject({
    token_hash: z.string().regex(/^[0-9a-f]{64}$/).meta({ description: 'SHA-256 of the reported token, in hex.' }),
    token_type: z.string().meta({ description: 'The type the report gave.' }),
    label: z.enum(['true_positive', 'false_positive']).meta({ description: '`true_positive` for a key of this service (live, disabled or expired).' }),
  }),
);

export type SecretScanningAnswer = z.output<typeof secretScanningAnswer>;
