-- Keys imported from another system (contract, "Import"): the service knows only the SHA-256 digest
-- of such a key, never the key itself, so it has no sealed appkey. key_ciphertext NULL marks an
-- imported key: it authenticates where its secret is presented (compared by digest) but cannot check
-- a signature (request tokens, jwt-bearer, client_secret_jwt need the secret itself). A regen seals a
-- key of this service, so only the first generation can be imported.
--
-- previous_key_digest (0021) finds the previous key by digest (verification, self-revocation, leak
-- reports), and is all an imported key's grace has: an imported key has no ciphertext to keep, so a
-- grace is now complete with either.
ALTER TABLE api_keys
  ALTER COLUMN key_ciphertext DROP NOT NULL,
  ADD CONSTRAINT api_keys_imported_first_generation CHECK (key_ciphertext IS NOT NULL OR key_generation = 1),
  DROP CONSTRAINT api_keys_previous_key_complete,
  ADD CONSTRAINT api_keys_previous_key_complete
    CHECK ((previous_key_valid_until IS NULL) = (previous_key_ciphertext IS NULL AND previous_key_digest IS NULL));

-- Whether any imported key is left (ImportedKeyPresence asks at start and then periodically): an
-- index holding only those, so the question costs nothing at a million ordinary keys.
CREATE INDEX api_keys_imported_idx ON api_keys (id) WHERE key_ciphertext IS NULL;
