-- Usage counts per key and UTC hour (contract, "Verifying keys, usage, leaks and imports"): tokens
-- issued, verifications by code (kind `verification:VALID`, ...) and refusals on the token routes by
-- their audit reason (`refused:rate_limited`, ...). Each instance sums its counts in memory and adds
-- them here in one multi-row upsert every USAGE_FLUSH_SECONDS (n = n + excluded.n), so the counts of
-- several instances add up and no request writes a row. A deleted key's rows go with it (CASCADE); a
-- key created again under the same appname has a new id and starts from nothing. Rows older than
-- USAGE_RETENTION_DAYS are pruned by the maintenance pass (by the index on hour).
CREATE TABLE api_key_usage (
  api_key_id uuid        NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  hour       timestamptz NOT NULL,
  kind       text        NOT NULL,
  n          bigint      NOT NULL CHECK (n >= 0),
  PRIMARY KEY (api_key_id, hour, kind)
);

CREATE INDEX api_key_usage_hour_idx ON api_key_usage (hour);
