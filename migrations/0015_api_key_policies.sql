-- Key policies (contract, "Key policies"): what a key's owner says about it beyond its role. Columns
-- of the key's own row, because every authentication already locks that row (sessions/opening.ts):
-- the policy is confirmed where the database is touched anyway, at no extra round trip.
--
-- policy_version    bumped by every change to what the checks read (on/off, expiry, addresses,
--                   permissions, rate limit, credits' settings, idle rule), so an instance that judged
--                   a login against a kept copy of the policy can have it confirmed by the write;
-- enabled, disabled_reason  off for now, and why (a disabled key always has a reason);
-- enabled_at        when the key was last turned on (its creation, at first): one anchor of the idle rule;
-- expires_at        the second the key stops working (null: never); expiry_recorded marks that its
--                   api_key.expired event was written, so it is written once;
-- allowed_addresses the addresses and CIDR ranges as the owner gave them, in their order;
-- allowed_networks  the same, normalised (IPv4-mapped IPv6 as IPv4), for the checks made in SQL;
-- permissions       names for the owner's own APIs, carried in the key's tokens' scope;
-- rate_limit, rate_limit_window_seconds  at most this many authentications per fixed window;
-- max_idle_days, max_idle_set_at  the idle rule and when it was set (another anchor of it);
-- last_used         the last successful authentication or verification.
ALTER TABLE api_keys
  ADD COLUMN policy_version            int NOT NULL DEFAULT 1,
  ADD COLUMN enabled                   boolean NOT NULL DEFAULT true,
  ADD COLUMN disabled_reason           text CHECK (disabled_reason IN ('manual', 'idle', 'leaked', 'holder')),
  ADD COLUMN enabled_at                timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN expires_at                timestamptz,
  ADD COLUMN expiry_recorded           boolean NOT NULL DEFAULT false,
  ADD COLUMN allowed_addresses         text[] NOT NULL DEFAULT '{}',
  ADD COLUMN allowed_networks          cidr[] NOT NULL DEFAULT '{}',
  ADD COLUMN permissions               text[] NOT NULL DEFAULT '{}',
  ADD COLUMN rate_limit                int CHECK (rate_limit BETWEEN 1 AND 1000000),
  ADD COLUMN rate_limit_window_seconds int CHECK (rate_limit_window_seconds BETWEEN 1 AND 86400),
  ADD COLUMN max_idle_days             int CHECK (max_idle_days BETWEEN 1 AND 3650),
  ADD COLUMN max_idle_set_at           timestamptz,
  ADD COLUMN last_used                 timestamptz,
  ADD CONSTRAINT api_keys_disabled_has_reason CHECK (enabled = (disabled_reason IS NULL)),
  ADD CONSTRAINT api_keys_rate_limit_complete CHECK ((rate_limit IS NULL) = (rate_limit_window_seconds IS NULL)),
  ADD CONSTRAINT api_keys_max_idle_complete CHECK ((max_idle_days IS NULL) = (max_idle_set_at IS NULL));

-- Keys that existed before policies were on since they were created.
UPDATE api_keys SET enabled_at = created_at;
