import { z } from 'zod';
import { badRequest } from '../shared/errors';

type Location = 'body' | 'query' | 'params';

/** A UTF-16 surrogate without its other half: no UTF-8 text holds it (it would be stored as U+FFFD, a different string). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

/**
 * Whether a string cannot be stored or compared faithfully: PostgreSQL `text` refuses NUL (a 500
 * if it got that far), bcrypt would end a password there, and an unpaired surrogate becomes U+FFFD
 * on its way to UTF-8. Every request string is checked (contract, "Bad input stays 400").
 */
export function hasUnstorableCharacters(text: string): boolean {
  return text.includes('\u0000') || LONE_SURROGATE.test(text);
}

/** A value met on the walk, with the way back to the root: its path is built only for the one refused. */
interface Visit {
  value: unknown;
  key?: string | number;
  parent?: Visit;
}

function pathOf(visit: Visit): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
}

/**
 * The path of the first string in `value` (an object or array from a parser, walked throughout)
 * that hasUnstorableCharacters, or undefined. Iterative, and linear in the size of the value: a
 * 64 KiB JSON body can nest 30,000 deep, and copying the path at every level would make the walk
 * quadratic, seconds of CPU for one unauthenticated request.
 */
function unstorablePath(value: unknown): (string | number)[] | undefined {
  const pending: Visit[] = [{ value }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (typeof next.value === 'string') {
      if (hasUnstorableCharacters(next.value)) return pathOf(next);
    } else if (next.value !== null && typeof next.value === 'object') {
      const inArray = Array.isArray(next.value);
      for (const [key, item] of Object.entries(next.value)) pending.push({ value: item, key: inArray ? Number(key) : key, parent: next });
    }
  }
  return undefined;
}

/** A field's name in a message: its path, the first steps of it when a body nests deeper than anyone reads. */
const NAMED_STEPS = 16;
function fieldName(location: Location, path: (string | number)[]): string {
  const steps = path.length > NAMED_STEPS ? [...path.slice(0, NAMED_STEPS).map(String), `… (${path.length} deep)`] : path.map(String);
  return [location, ...steps].join('.');
}

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
 * to ten of them (then how many more). A string holding NUL or an unpaired surrogate anywhere is a
 * 400 naming its field before the schema is consulted.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: Location): z.output<S> {
  // Before the schema, for every route at once: a NUL or a lone surrogate in any string is a 400 naming the field.
  const unstorable = unstorablePath(value);
  if (unstorable) throw badRequest(`${fieldName(location, unstorable)}: ${UNSTORABLE_MESSAGE}`);
  const result = schema.safeParse(value, MESSAGES);
  if (!result.success) throw badRequest(result.error.issues.map((i) => describe(i, location)).join('; '));
  return result.data;
}
