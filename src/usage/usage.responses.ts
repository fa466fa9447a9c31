import { z } from 'zod';
import { envelopeOf } from '../shared/envelope';
import { KEY_REFUSALS } from '../shared/key-refusals';
import { VERIFY_CODES } from '../shared/verify-codes';

const count = z.int().min(1);

/** One interval that had use: only the codes and reasons that occurred are present. */
export const usageInterval = z
  .strictObject({
    start: z.int().min(0).meta({ description: 'Unix seconds at which the interval (a UTC hour or day) starts.' }),
    tokens: z.int().min(0).meta({ description: 'Tokens issued to the key (any grant, refresh included).' }),
    verifications: z.partialRecord(z.enum(VERIFY_CODES), count).meta({ description: 'Verifications of the key by code.' }),
    refused: z.partialRecord(z.enum(KEY_REFUSALS), count).meta({ description: "Refusals of the key on the token routes, by the audit event's reason." }),
  })
  .meta({ readOnly: true });
export type UsageInterval = z.output<typeof usageInterval>;

export const usageEnvelope = envelopeOf(z.array(usageInterval));
