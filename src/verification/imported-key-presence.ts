/**
 * Whether the service may hold an imported key (POST /api/v1/api-keys/import). An `ak_` string with a
 * wrong checksum can be no key this service generated, so verification answers it NOT_FOUND without
 * reading the database; but an imported key may look like one, so that shortcut holds only while no
 * key was ever imported (contract, "Verifying keys, usage, leaks and imports").
 */
export interface ImportedKeyPresence {
  /** True when an imported key may exist: a malformed `ak_` string must then be looked up like any other. */
  mayHoldImportedKeys(): boolean;
}

/**
 * Until import exists, the service holds no imported key. TODO(issue #35): replace with the import's
 * own answer (e.g. a flag read at start and set by the first import on any instance) once
 * POST /api/v1/api-keys/import is merged; services.ts passes this to KeyVerifier.
 */
export const NO_IMPORTED_KEYS: ImportedKeyPresence = { mayHoldImportedKeys: () => false };
