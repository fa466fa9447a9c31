-- Credits (contract, "Key policies"): a number of uses left, spent exactly (one conditional UPDATE of
-- the locked key row, never below 0), and optionally set back to an amount at 00:00 UTC each day or on
-- the 1st of each month. No job runs at that instant: the refill is computed when the credits are next
-- read or spent, by the function below, which every statement that does either calls, so the rule is
-- written once.
--
-- credits_updated_at is the moment the stored credits were last brought up to date (set, spent, or
-- refilled on the way): a refill is due when a boundary lies after it. Writers only move it forward
-- (GREATEST), so two instances whose clocks differ by a second cannot refill twice for one boundary.
ALTER TABLE api_keys
  ADD COLUMN credits_remaining       bigint CHECK (credits_remaining BETWEEN 0 AND 1000000000000),
  ADD COLUMN credits_refill_amount   bigint CHECK (credits_refill_amount BETWEEN 1 AND 1000000000000),
  ADD COLUMN credits_refill_interval text CHECK (credits_refill_interval IN ('day', 'month')),
  ADD COLUMN credits_updated_at      timestamptz,
  ADD CONSTRAINT api_keys_credits_refill_complete
    CHECK ((credits_refill_amount IS NULL) = (credits_refill_interval IS NULL)),
  ADD CONSTRAINT api_keys_credits_complete
    CHECK ((credits_remaining IS NULL) = (credits_updated_at IS NULL)),
  ADD CONSTRAINT api_keys_credits_refill_needs_credits
    CHECK (credits_refill_amount IS NULL OR credits_remaining IS NOT NULL);

-- The credits a key has at `at`: `remaining`, or `amount` when a refill boundary (00:00 UTC each day,
-- or 00:00 UTC on the 1st of each month) lies after `updated_at` and not after `at`. NULL: the key has
-- no credits (no limit).
CREATE FUNCTION api_key_credits_at(remaining bigint, amount bigint, every text, updated_at timestamptz, at timestamptz)
  RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
           WHEN every IS NOT NULL AND date_trunc(every, at AT TIME ZONE 'UTC') > date_trunc(every, updated_at AT TIME ZONE 'UTC')
             THEN amount
           ELSE remaining
         END
$$;
