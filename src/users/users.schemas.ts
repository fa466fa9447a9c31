import { z } from 'zod';
import { ROLES } from '../shared/principals';
import { USERNAME_PATTERN, USERNAME_RULE } from '../shared/names';
import { bcryptProblem, newPasswordProblem } from './password-rules';

const username = z.string().regex(USERNAME_PATTERN, `must be ${USERNAME_RULE}`);

const role = z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}, or null for none` }).nullable();

/** A string judged by `problem`, whose words the 400 that names the field gives. */
const passwordBy = (problem: (password: string) => string | undefined) =>
  z.string().superRefine((password, ctx) => {
    const found = problem(password);
    if (found) ctx.addIssue({ code: 'custom', message: found });
  });

/** A password someone sets: the password rules. */
const newPassword = passwordBy(newPasswordProblem);

export const usernameParams = z.strictObject({
  /** The user's name, from the path. */
  username,
});

const limit = z
  .string()
  .regex(/^\d{1,4}$/, 'must be a whole number from 1 to 1000')
  .transform(Number)
  .pipe(z.number().min(1, 'must be a whole number from 1 to 1000').max(1000, 'must be a whole number from 1 to 1000'));

export const listUsersQuery = z.strictObject({
  /** Page size, 1 to 1000. */
  limit: limit.default(1000),
  /** Return only users whose username sorts strictly after this one (byte order). */
  after: username.optional(),
});

export const createUserBody = z.strictObject({
  /** 1 to 64 characters of letters, digits, . _ @ -, starting with a letter or digit. */
  username,
  /** viewer, editor, admin, or null (none, when omitted). */
  role: role.default(null),
  /** The user's password; when omitted one is generated and answered once. */
  password: newPassword.optional(),
});

/** Replaces the two: an omitted role becomes none, an omitted disabled false. */
export const updateUserBody = z.strictObject({
  /** viewer, editor, admin, or null (none, when omitted). */
  role: role.default(null),
  /** A disabled user cannot log in, and their sessions have ended. */
  disabled: z.boolean().default(false),
});

export const setUserPasswordBody = z.strictObject({
  /** The new password, under the password rules. */
  password: newPassword,
});

export const changeOwnPasswordBody = z.strictObject({
  /** The password the user signs in with now (at most 72 bytes, as at login). */
  current_password: passwordBy(bcryptProblem),
  /** The new password, under the password rules. */
  new_password: newPassword,
});

export type ListUsersInput = z.output<typeof listUsersQuery>;
export type CreateUserInput = z.output<typeof createUserBody>;
export type UpdateUserInput = z.output<typeof updateUserBody>;
