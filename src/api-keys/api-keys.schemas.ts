import { z } from 'zod';
import { ROLES } from '../shared/principals';
import { APPNAME_PATTERN } from '../shared/names';
import { createPolicyBody } from '../key-policies/policy.schemas';

const appname = z
  .string()
  .regex(APPNAME_PATTERN, 'must be 1 to 64 characters of a-z 0-9 . _ -, starting with a letter or digit');

const description = z.string().max(1024, 'must be at most 1024 characters');

const roles = z
  .array(z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }))
  .max(1, 'must hold at most one role');

export const appnameParams = z.strictObject({
  /** The key's name, from the path. */
  appname,
});

export const createApiKeyBody = z.strictObject({
  /** Unique name of the key; used as its path identifier. */
  appname,
  /** Free text; "" when omitted. */
  description: description.default(''),
  /** At most one role; may be empty. */
  roles,
  /** The key's policy from its first moment (see GET .../policy); omitted: every field's default. */
  policy: createPolicyBody.optional(),
});

/** Update and regen replace the record: what is omitted becomes empty. */
export const updateApiKeyBody = z.strictObject({
  /** Free text; "" when omitted. */
  description: description.default(''),
  /** At most one role; [] when omitted. */
  roles: roles.default([]),
});

const limit = z
  .string()
  .regex(/^\d{1,4}$/, 'must be a whole number from 1 to 1000')
  .transform(Number)
  .pipe(z.number().min(1, 'must be a whole number from 1 to 1000').max(1000, 'must be a whole number from 1 to 1000'));

const PREFIX_RULE = 'must be 1 to 64 characters of a-z 0-9 . _ -';

/**
 * The start of an appname: its characters, but any of them first. The lengths abort, so a prefix
 * too short or too long gets one message, not two; they are also what OpenAPI publishes as
 * minLength and maxLength. Only ASCII passes, which listApiKeys relies on.
 */
const prefix = z
  .string()
  .min(1, { error: PREFIX_RULE, abort: true })
  .max(64, { error: PREFIX_RULE, abort: true })
  .regex(/^[a-z0-9._-]+$/, PREFIX_RULE);

export const listApiKeysQuery = z.strictObject({
  /** Page size, 1 to 1000. */
  limit: limit.default(1000),
  /** Return only keys whose appname sorts strictly after this one. */
  after: appname.optional(),
  /** Return only keys whose appname starts with this; `_` and `.` are themselves, not wildcards. */
  prefix: prefix.optional(),
});

const MAX_GRACE_SECONDS = 604_800;

export const regenApiKeyQuery = z.strictObject({
  /** How long the replaced appkey, and the sessions it opened, stay valid: 0 (default) to 604800 seconds for an admin, at most 3600 for an editor. */
  grace_seconds: z
    .string()
    .regex(/^\d{1,6}$/, `must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}`)
    .transform(Number)
    .pipe(z.number().max(MAX_GRACE_SECONDS, `must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}`))
    .default(0),
});

export type CreateApiKeyInput = z.output<typeof createApiKeyBody>;
export type UpdateApiKeyInput = z.output<typeof updateApiKeyBody>;
export type ListApiKeysInput = z.output<typeof listApiKeysQuery>;
