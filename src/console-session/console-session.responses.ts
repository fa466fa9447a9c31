import { z } from 'zod';
import { envelopeOf } from '../shared/envelope';

/** What the page keeps in memory: an access token. The refresh token stays in the cookie. */
export const consoleAccess = z.strictObject({
  access_token: z.string().meta({ readOnly: true, description: 'A bearer access token (JWT), kept in the page\'s memory only.' }),
  token_type: z.literal('bearer').meta({ readOnly: true }),
  expires_in: z.int().min(1).meta({ readOnly: true, description: 'Seconds until the access token expires.' }),
  scope: z.string().meta({ readOnly: true, description: 'The access token\'s scope.' }),
});

export const consoleAccessEnvelope = envelopeOf(consoleAccess);

export type ConsoleAccess = z.output<typeof consoleAccess>;
