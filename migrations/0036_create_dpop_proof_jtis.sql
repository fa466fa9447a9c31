-- DPoP proofs already presented (RFC 9449 §11.1), so that a proof copied off the wire is refused on
-- every instance. A proof is accepted while its iat is at most 60 s from now either way, so its
-- record is kept until iat + 60 s (expires_at), then pruned by the maintenance pass.
--
-- Keyed by SHA-256 of the proof key's thumbprint and the proof's jti: one client's jti never blocks
-- another's, and a jti of any length costs 32 bytes. The runtime role reads, inserts, renews and
-- prunes it, by the grants every table of the schema gets (grant_runtime_privileges, 0012).
CREATE TABLE dpop_proof_jtis (
  digest     bytea PRIMARY KEY,
  expires_at timestamptz NOT NULL
);

CREATE INDEX dpop_proof_jtis_expires_at_idx ON dpop_proof_jtis (expires_at);
