import { z } from 'zod';
import { ROLES } from '../shared/principals';
import { envelopeOf } from '../shared/envelope';
import { USERNAME_PATTERN } from '../shared/names';

/** A user as the presenter sends one (never a hash); the source of the OpenAPI response schemas. */
export const userRecord = z.strictObject({
  username: z.string().regex(USERNAME_PATTERN).meta({ readOnly: true, description: 'The name the user logs in with; the path identifier.' }),
  role: z.enum(ROLES).nullable().meta({ description: 'The user\'s role; null for none.' }),
  disabled: z.boolean().meta({ description: 'A disabled user cannot log in.' }),
  created_at: z.int().min(0).meta({ readOnly: true, description: 'Unix time in seconds when the user was created.' }),
  last_login: z.int().min(0).nullable().meta({ readOnly: true, description: 'Unix time in seconds of the last password login; null before the first.' }),
});

/** A create without a password answers the generated one, this once; with one, the record alone. */
export const createdUserRecord = userRecord.extend({
  password: z.string().min(12).optional().meta({ readOnly: true, description: 'The generated password, when the request gave none; shown only by this answer.' }),
});

/** Who is calling, as GET /api/v1/me answers it. */
export const meRecord = z.strictObject({
  principal_type: z.enum(['user', 'api_key']).meta({ description: 'A user (username and password) or an API key.' }),
  name: z.string().meta({ description: 'The username or the appname.' }),
  roles: z.array(z.enum(ROLES)).max(1).meta({ description: 'The principal\'s role now: at most one.' }),
  scope: z.string().meta({ description: 'The scope of the access token the call came with.' }),
  expires_at: z.int().min(0).meta({ description: 'Unix time in seconds when that access token expires (its exp).' }),
});

export const userEnvelope = envelopeOf(userRecord);
export const createdUserEnvelope = envelopeOf(createdUserRecord);
export const userListEnvelope = envelopeOf(z.array(userRecord));
export const meEnvelope = envelopeOf(meRecord);

export type UserRecord = z.output<typeof userRecord>;
export type MeRecord = z.output<typeof meRecord>;
