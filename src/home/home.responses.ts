import { z } from 'zod';

/** What GET / answers when the console is off: where to go from here, as paths on this service. */
export const homeIndex = z.strictObject({
  service: z.literal('api-key-token-service'),
  links: z.strictObject({
    /** The OpenAPI document rendered in the browser; absent when API_REFERENCE_ENABLED=false. */
    api_reference: z.string().optional(),
    openapi: z.string(),
    discovery: z.string(),
    jwks: z.string(),
    health: z.string(),
    readiness: z.string(),
  }),
});

export type HomeIndex = z.infer<typeof homeIndex>;
