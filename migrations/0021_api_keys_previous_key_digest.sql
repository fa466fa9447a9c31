-- Verification (POST /api/v1/keys/verify) finds a key by the SHA-256 digest of what its caller
-- presents. The token routes accept the previous appkey while its grace lasts, so verification must
-- find it too: its digest is kept beside its sealed copy, set by a regen with a grace and cleared
-- with it. A grace that began before this migration has no digest (the appkey is only sealed here):
-- such a previous appkey verifies as NOT_FOUND until its grace ends, while it still works as a secret
-- on the token routes.
ALTER TABLE api_keys ADD COLUMN previous_key_digest bytea;

CREATE UNIQUE INDEX api_keys_previous_key_digest_idx ON api_keys (previous_key_digest) WHERE previous_key_digest IS NOT NULL;
