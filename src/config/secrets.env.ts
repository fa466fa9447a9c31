import { z } from 'zod';
import type { EnvOf } from './env-kit';

const masterKey = z
  .string()
  .optional()
  .refine((v) => v === undefined || v === '' || Buffer.from(v, 'base64').length === 32, {
    message: 'must be 32 bytes encoded in base64 (try: openssl rand -base64 32)',
  })
  .transform((v) => (v ? Buffer.from(v, 'base64') : undefined));

/** The keys that seal what the database holds, how passwords are hashed, and the first admin. */
export const secretsEnv = {
  MASTER_KEY: masterKey.describe('32 bytes, base64 (`openssl rand -base64 32`); encrypts appkeys and signing keys at rest, and keys the refresh tokens. Back it up with the database, and [rotate it](operations.md#rotating-master_key) rather than replace it. Unset: generated into `DATA_DIR/master.key` on the first start (refused in production)'),
  MASTER_KEY_PREVIOUS: masterKey.describe('During a [`MASTER_KEY` rotation](operations.md#rotating-master_key), the old key: it still opens what it sealed until `npm run cli -- keys rewrap` has run, and keeps older refresh tokens valid while set; only with `MASTER_KEY`'),
  BCRYPT_COST: z.coerce.number().int().min(4).max(15).default(12).describe('bcrypt cost, 4 to 15; below 10 logs a warning (tests only)'),
  BOOTSTRAP_ADMIN_USERNAME: z.string().optional().describe('With the password: create this admin at start while no admin user exists at all (never overwrites; a deleted admin does not come back while another admin exists). A name outside the username rule stops the start. Unset, on an empty database outside production: an `admin` whose generated password goes to `DATA_DIR/first-admin-password`'),
  BOOTSTRAP_ADMIN_PASSWORD: z.string().optional().describe('Its password, by the password rule (12 characters to 72 bytes, not a common or breached password, not one character repeated), or the start stops naming the variable'),
};

export function secretsSettings(e: EnvOf<typeof secretsEnv>) {
  return {
    masterKey: e.MASTER_KEY,
    masterKeyPrevious: e.MASTER_KEY_PREVIOUS,
    bcryptCost: e.BCRYPT_COST,
    bootstrapAdmin:
      e.BOOTSTRAP_ADMIN_USERNAME && e.BOOTSTRAP_ADMIN_PASSWORD
        ? Object.freeze({ username: e.BOOTSTRAP_ADMIN_USERNAME, password: e.BOOTSTRAP_ADMIN_PASSWORD })
        : undefined,
  };
}
