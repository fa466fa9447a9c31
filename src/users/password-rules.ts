import { readFileSync } from 'node:fs';
import path from 'node:path';
import { badRequest } from '../shared/errors';

/** NIST SP 800-63B: at least 8, and 12 or more where passwords are the only factor, as here. */
const MIN_PASSWORD_LENGTH = 12;
// bcrypt only reads the first 72 bytes; longer passwords are refused rather than silently cut.
const MAX_PASSWORD_BYTES = 72;

/** The same path from src/users and from dist/users: the list ships beside migrations/, at the repository's root. */
export const COMMON_PASSWORDS_FILE = path.resolve(__dirname, '../../assets/common-passwords.txt');

/**
 * Common and breached passwords of 12 characters or more, lowercase, read once when this module is
 * first loaded (at start): a few hundred lines, and a lookup per new password.
 */
const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  readFileSync(COMMON_PASSWORDS_FILE, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#')),
);

/** Why bcrypt could not check `password` faithfully, or undefined. */
export function bcryptProblem(password: string): string | undefined {
  // bcrypt stops at NUL: "abc\0x" would be the password "abc".
  if (password.includes('\u0000')) return 'must not contain NUL characters';
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return `must be at most ${MAX_PASSWORD_BYTES} bytes`;
  return undefined;
}

/** A password bcrypt can check faithfully: at login and when set. The 400 names `field`. */
export function assertPasswordFitsBcrypt(password: string, field = 'password'): void {
  const problem = bcryptProblem(password);
  if (problem) throw badRequest(`${field}: ${problem}`);
}

/** Why `password` is not acceptable as a new one, or undefined when it is (the first start reports it naming its variable). */
export function newPasswordProblem(password: string): string | undefined {
  // Code points, not UTF-16 units: an emoji is one character to the person typing it.
  if ([...password].length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  const unfit = bcryptProblem(password);
  if (unfit) return unfit;
  if (/^(.)\1*$/su.test(password)) return 'must not be one character repeated';
  if (COMMON_PASSWORDS.has(password.toLowerCase())) return 'is too common: it appears in lists of breached passwords';
  return undefined;
}

/** A password acceptable as a new one: 12 characters to 72 bytes, not common, not one character repeated. The 400 names `field`. */
export function assertNewPasswordAcceptable(password: string, field = 'password'): void {
  const problem = newPasswordProblem(password);
  if (problem) throw badRequest(`${field}: ${problem}`);
}
