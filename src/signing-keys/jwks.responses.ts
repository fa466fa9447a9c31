import { z } from 'zod';

/** A public ES256 signing key (RFC 7517, RFC 7518 §6.2). */
const publicJwk = z.strictObject({
  kty: z.literal('EC'),
  crv: z.literal('P-256'),
  x: z.string().min(1),
  y: z.string().min(1),
  kid: z.string().min(1),
  alg: z.literal('ES256'),
  use: z.literal('sig'),
});

export type PublicJwk = z.output<typeof publicJwk>;

/** The public signing keys, for verifying access and ID tokens offline (RFC 7517). */
export const jwkSet = z.strictObject({ keys: z.array(publicJwk) });
