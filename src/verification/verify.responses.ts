import { z } from 'zod';
import { ROLES } from '../shared/principals';
import { VERIFY_CODES } from '../shared/verify-codes';

const unixSeconds = z.int().min(0);

/** The answer of POST /api/v1/keys/verify: `valid` and `code` always, the key's fields when it exists. */
export const verifyKeyResult = z
  .strictObject({
    valid: z.boolean().meta({ description: 'True exactly when code is VALID.' }),
    code: z.enum(VERIFY_CODES).meta({ description: 'The first check that applies, in the order listed; VALID when none refuses.' }),
    appname: z.string().optional().meta({ description: 'The key found (absent for NOT_FOUND).' }),
    roles: z.array(z.enum(ROLES)).max(1).optional(),
    permissions: z.array(z.string()).optional().meta({ description: "The key's permissions (its policy)." }),
    expires_at: unixSeconds.nullable().optional().meta({ description: 'Unix seconds from which the key no longer works; null: never.' }),
    credits: z
      .strictObject({ remaining: z.int().min(0) })
      .nullable()
      .optional()
      .meta({ description: 'The credits left after this verification; null: the key has no credits.' }),
    rate_limit: z
      .strictObject({ limit: z.int().min(1), remaining: z.int().min(0), reset: unixSeconds.meta({ description: 'Unix seconds at which the window ends.' }) })
      .nullable()
      .optional()
      .meta({ description: "Where the key stands in its rate limit's window after this verification; null: no limit (or its count is unknown)." }),
    last_used: unixSeconds.nullable().optional().meta({ description: 'Unix seconds of the last successful authentication or verification (this one, when VALID); null: never.' }),
  })
  .meta({ readOnly: true });
export type VerifyKeyResult = z.output<typeof verifyKeyResult>;
