import { badRequest } from '../shared/errors';

const MIN_PASSWORD_LENGTH = 8;
// bcrypt only reads the first 72 bytes; longer passwords are refused rather than silently cut.
const MAX_PASSWORD_BYTES = 72;

/** A password bcrypt can check faithfully: at login and when set. */
export function assertPasswordFitsBcrypt(password: string): void {
  // bcrypt stops at NUL: "abc\0x" would be the password "abc".
  if (password.includes('\u0000')) throw badRequest('password: must not contain NUL characters');
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw badRequest(`password: must be at most ${MAX_PASSWORD_BYTES} bytes`);
  }
}

/** A password acceptable as a new one. */
export function assertNewPasswordAcceptable(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(`password: must be at least ${MIN_PASSWORD_LENGTH} characters`);
  assertPasswordFitsBcrypt(password);
}
