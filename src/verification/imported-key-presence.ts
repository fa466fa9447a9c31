/**
 * Whether the service may hold an imported key (POST /api/v1/api-keys/import). An `ak_` string with a
 * wrong checksum can be no key this service generated, so verification answers it NOT_FOUND without
 * reading the database; but an imported key may look like one, so that shortcut holds only while no
 * imported secret is left (contract, "Verifying keys, usage, leaks and imports").
 */
export interface ImportedKeyPresence {
  /** True when an imported key may exist: a malformed `ak_` string must then be looked up like any other. */
  mayHoldImportedKeys(): boolean;
}
