-- What the maintenance pass looks for (src/maintenance.ts): keys past their expiry whose event is not
-- yet written, and keys under an idle rule that are still on. Partial indexes on columns a login never
-- writes (it writes last_login, last_ip, last_used and credits), so a login's update of the key row
-- stays a HOT update, and neither index holds the keys without such a policy.
CREATE INDEX api_keys_unrecorded_expiry_idx ON api_keys (expires_at) WHERE expires_at IS NOT NULL AND NOT expiry_recorded;
CREATE INDEX api_keys_idle_rule_idx ON api_keys (id) WHERE max_idle_days IS NOT NULL AND enabled;
