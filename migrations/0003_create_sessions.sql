-- One row per login. Access tokens name their session (sid) and are refused once it is revoked,
-- expired or its principal is gone. Only the id (jti) of the one valid refresh token is kept:
-- a signed refresh token whose jti differs from refresh_jti has already been used.
CREATE TABLE sessions (
  id                 uuid PRIMARY KEY,
  user_id            uuid REFERENCES users (id) ON DELETE CASCADE,
  api_key_id         uuid REFERENCES api_keys (id) ON DELETE CASCADE,
  refresh_jti        uuid NOT NULL,
  refresh_expires_at timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL,
  revoked_at         timestamptz,
  revoked_reason     text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  CHECK ((user_id IS NULL) <> (api_key_id IS NULL))
);

CREATE INDEX sessions_user_id_idx ON sessions (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX sessions_api_key_id_idx ON sessions (api_key_id) WHERE api_key_id IS NOT NULL;
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);
