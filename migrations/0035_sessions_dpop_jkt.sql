-- DPoP (RFC 9449). A session opened with a DPoP proof at the token endpoint is bound to the proof's
-- key: dpop_jkt is that key's RFC 7638 thumbprint (SHA-256, base64url), NULL for a bearer session.
-- Its refresh tokens are redeemed only with a proof by the same key, and each rotation checks that
-- the key it was shown is still the session's.
ALTER TABLE sessions ADD COLUMN dpop_jkt text;
