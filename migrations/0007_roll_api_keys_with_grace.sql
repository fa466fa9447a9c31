-- Rolling an appkey without downtime. Each regen bumps key_generation; a session remembers the
-- generation of the appkey that opened it and is live only while that generation is the current
-- one, or the previous one within its grace (previous_key_valid_until). The previous appkey is kept
-- sealed like the current one, only while its grace lasts (maintenance clears it afterwards), so at
-- most two appkeys of a key are ever valid.
ALTER TABLE api_keys
  ADD COLUMN key_generation           int NOT NULL DEFAULT 1,
  ADD COLUMN previous_key_ciphertext  bytea,
  ADD COLUMN previous_key_valid_until timestamptz,
  ADD CONSTRAINT api_keys_previous_key_complete
    CHECK ((previous_key_ciphertext IS NULL) = (previous_key_valid_until IS NULL));

ALTER TABLE sessions ADD COLUMN key_generation int;
UPDATE sessions SET key_generation = 1 WHERE api_key_id IS NOT NULL;
ALTER TABLE sessions ADD CONSTRAINT sessions_key_generation_of_api_keys
  CHECK ((api_key_id IS NULL) = (key_generation IS NULL));
