-- Machine principals. The appkey itself is never stored in the clear:
--   key_digest     SHA-256 of the appkey, for uniqueness and for looking a leaked key up;
--   key_ciphertext the appkey under AES-256-GCM with MASTER_KEY, because verifying an HS256
--                  request token needs the shared secret itself.
-- id changes when an appname is deleted and created again, so tokens of the old key never match.
CREATE TABLE api_keys (
  appname        text COLLATE "C" PRIMARY KEY,
  id             uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  description    text NOT NULL DEFAULT '',
  role           text CHECK (role IN ('viewer', 'editor', 'admin')),
  key_digest     bytea NOT NULL UNIQUE,
  key_ciphertext bytea NOT NULL,
  last_login     bigint,
  last_ip        text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
