import { z } from 'zod';
import { ERROR_STATUS, type ErrorBody, type ErrorName } from '../shared/errors';

const ERROR_NAMES = Object.keys(ERROR_STATUS) as [ErrorName, ...ErrorName[]];

/** The one error body of every error status: exactly `{status, name, message}`. */
export const errorBody = z.strictObject({
  status: z.int32().min(400).max(599).meta({ format: 'int32', description: 'Equals the HTTP status; 4xx a client fault, 5xx a service fault.' }),
  name: z.enum(ERROR_NAMES).meta({ description: 'Type of the error.' }),
  message: z.string().meta({ description: 'Description of the error.' }),
});

/** The error body of one name, whose `status` is fixed by the closed table in errors.ts. */
export function errorBodyOf(name: ErrorName) {
  return errorBody.extend({ status: z.literal(ERROR_STATUS[name]).meta({ type: 'integer' }), name: z.literal(name) });
}

// Compile-time guard: the schema describes what AppError.toBody() returns.
const _describesError: z.ZodType<ErrorBody, ErrorBody> = errorBody;
