-- ES256 signing keys. The private key is stored only encrypted under MASTER_KEY.
-- retired_at is set when a newer key takes over; the public key stays published until every
-- token it signed has expired.
CREATE TABLE signing_keys (
  kid                    text PRIMARY KEY,
  private_key_ciphertext bytea NOT NULL,
  public_jwk             jsonb NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  retired_at             timestamptz
);

CREATE UNIQUE INDEX signing_keys_one_active_idx ON signing_keys ((true)) WHERE retired_at IS NULL;
