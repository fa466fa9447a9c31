import { z } from 'zod';

export const handOverBody = z.strictObject({
  /** The refresh token the console's sign-in got (client_id console); it is used up here. */
  refresh_token: z.string().min(1, 'is required'),
});
