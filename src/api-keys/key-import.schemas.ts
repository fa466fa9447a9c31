import { z } from 'zod';
import { createApiKeyBody } from './api-keys.schemas';

/** The most keys one import takes: with their policies about 1 MiB of JSON, the route's body limit. */
export const MAX_IMPORTED_KEYS = 1000;

/** A key as another system knows it: the create body without a key, with the digest of the key its holders send. */
const importedKey = z.strictObject({
  ...createApiKeyBody.shape,
  /** SHA-256 of the key exactly as its holders present it, in hex (64 characters; either case). */
  digest: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the key in hex: 64 characters of 0-9 a-f')
    .transform((hex) => hex.toLowerCase()),
});

export const importApiKeysBody = z.strictObject({
  /** 1 to 1000 keys, imported all or none. */
  keys: z
    .array(importedKey)
    .min(1, `must hold 1 to ${MAX_IMPORTED_KEYS} keys`)
    .max(MAX_IMPORTED_KEYS, `must hold 1 to ${MAX_IMPORTED_KEYS} keys`),
});

export type ImportApiKeysInput = z.output<typeof importApiKeysBody>;
