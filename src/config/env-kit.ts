import { z } from 'zod';

/** The parsed values of one section's variables. */
export type EnvOf<S extends z.ZodRawShape> = z.infer<z.ZodObject<S>>;

/** Whole seconds of at least 1. */
export const wholeSeconds = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/** A count of at least 1. */
export const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/** `true` or `false`, as text (the environment holds only text). */
export const flag = (fallback: 'true' | 'false') => z.enum(['true', 'false']).default(fallback);
