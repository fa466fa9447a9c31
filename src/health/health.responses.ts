import { z } from 'zod';

/** What /healthz and /readyz answer when all is well. */
export const healthStatus = z.strictObject({ status: z.literal('ok') });
