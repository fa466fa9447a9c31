import { z } from 'zod';
import { badRequest } from '../shared/errors';

type Location = 'body' | 'query' | 'params';

/**
 * A string PostgreSQL can store: `text` refuses NUL, and bcrypt would silently end a password
 * there, so NUL is a 400 naming the field rather than a 500 or a weaker password.
 */
export const storableString = () => z.string().refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');

/** A 64 KiB body can hold thousands of unknown fields, or one of 64 KiB: the message names a few, each cut short. */
const NAMED_FIELDS = 10;
const NAME_CHARS = 64;
const shown = (name: string) => `"${name.length > NAME_CHARS ? `${name.slice(0, NAME_CHARS)}…` : name}"`;

function describe(issue: z.core.$ZodIssue, location: Location): string {
  if (issue.code === 'unrecognized_keys') {
    const where = [location, ...issue.path.map(String)].join('.');
    const fields = issue.keys.slice(0, NAMED_FIELDS).map(shown).join(', ');
    const more = issue.keys.length > NAMED_FIELDS ? ` and ${issue.keys.length - NAMED_FIELDS} more` : '';
    return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${fields}${more}`;
  }
  return `${[location, ...issue.path.map(String)].join('.')}: ${issue.message}`;
}

/** Zod's default "expected X, received undefined" for a missing field reads better as "is required". */
const MESSAGES: z.core.ParseContext<z.core.$ZodIssue> = {
  error: (issue) =>
    issue.code === 'invalid_type' && issue.input === undefined
      ? issue.path?.length
        ? 'is required'
        : `a JSON object is required`
      : undefined,
};

/**
 * Parses one part of a request with a strict schema. On failure, a 400 whose message names every
 * offending field by its path (`body.roles.0: ...`, `body: unknown field "foo"`), unknown fields up
 * to ten of them (then how many more).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: Location): z.output<S> {
  const result = schema.safeParse(value, MESSAGES);
  if (!result.success) throw badRequest(result.error.issues.map((i) => describe(i, location)).join('; '));
  return result.data;
}
