import { z } from 'zod';
import { ERROR_STATUS, errorBody, type ErrorName } from '../shared/errors';

export { errorBody };

/** The error body of one name, whose `status` is fixed by the closed table in errors.ts. */
export function errorBodyOf(name: ErrorName) {
  return errorBody.extend({ status: z.literal(ERROR_STATUS[name]).meta({ type: 'integer' }), name: z.literal(name) });
}
