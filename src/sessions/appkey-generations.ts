/**
 * The grace rule, written once: a regen makes the new appkey the key's current generation; the one
 * it replaced stays valid, as generation current - 1, while `previous_key_valid_until` is ahead.
 * Sessions carry the generation they were opened with, so one rule decides for appkeys and sessions.
 */

/** Key row `k`'s previous appkey is still valid (its grace lasts). Never NULL, so it can be negated. */
export const previousAppkeyValid = (k: string) => `COALESCE(${k}.previous_key_valid_until > now(), false)`;

/** The generation of key row `k`'s previous appkey. */
export const previousGeneration = (k: string) => `(${k}.key_generation - 1)`;

/** Appkey generation `generation` (an SQL expression) is valid for key row `k`: the current one, or the previous one in its grace. */
export const appkeyGenerationValid = (generation: string, k: string) =>
  `(${generation} = ${k}.key_generation OR (${generation} = ${previousGeneration(k)} AND ${previousAppkeyValid(k)}))`;
