-- jti values of request tokens already exchanged, kept until the token would have expired, so a
-- replayed request token is refused. Rows past expires_at are pruned.
CREATE TABLE request_token_jtis (
  api_key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  jti        text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (api_key_id, jti)
);

CREATE INDEX request_token_jtis_expires_at_idx ON request_token_jtis (expires_at);
