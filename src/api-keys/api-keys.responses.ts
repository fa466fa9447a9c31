import { z } from 'zod';
import { ROLES } from '../shared/principals';
import { APPKEY_PATTERN } from './appkey';
import { envelopeOf } from '../shared/envelope';
import { APPNAME_PATTERN } from '../shared/names';

/** The API key record as the presenter sends it; the source of the OpenAPI response schemas. */
export const apiKeyRecord = z.strictObject({
  appname: z.string().regex(APPNAME_PATTERN).meta({ readOnly: true, description: 'Name of the key; used as the path identifier.' }),
  description: z.string().max(1024).meta({ description: 'Free-text description.' }),
  roles: z.array(z.enum(ROLES)).max(1).meta({ description: 'The role assigned to the key: at most one.' }),
  last_login: z
    .int()
    .min(0)
    .nullable()
    .meta({ readOnly: true, description: 'Unix time in seconds of the last token exchange with this key; null before the first.' }),
  last_ip: z.string().nullable().meta({ readOnly: true, description: 'Client address of the last token exchange; null before the first.' }),
});

/** Create and regen alone return the secret, in the shape `generateAppkey` produces. */
export const apiKeyRecordWithAppkey = apiKeyRecord.extend({
  appkey: z
    .string()
    .regex(APPKEY_PATTERN)
    .meta({ readOnly: true, description: 'The API key secret; shown only by create and regen.' }),
});

export const apiKeyEnvelope = envelopeOf(apiKeyRecord);
export const apiKeyWithAppkeyEnvelope = envelopeOf(apiKeyRecordWithAppkey);
export const apiKeyListEnvelope = envelopeOf(z.array(apiKeyRecord));

export type ApiKeyRecord = z.output<typeof apiKeyRecord>;
export type ApiKeyRecordWithAppkey = z.output<typeof apiKeyRecordWithAppkey>;
