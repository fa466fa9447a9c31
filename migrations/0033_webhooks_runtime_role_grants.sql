-- The least-privileged runtime role (0010) and the webhook tables. Its default privileges gave it
-- every right on both; it keeps what the API and the dispatcher need and nothing more:
--   webhook_endpoints: all of it (the admin API creates, changes and deletes endpoints; the
--     dispatcher takes and renews its leases there);
--   webhook_deliveries: read, record an attempt's outcome (the columns below, never the endpoint,
--     the event or the id a message is about), and delete (pruning finished rows; an endpoint's
--     deletion cascades). No INSERT: messages come only from audit events, through the trigger of
--     0032, which runs as the owner.
-- Like 0010, this grants nothing where the role does not exist.
DO $$
DECLARE
  s text := current_schema();
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'apikeys_runtime') THEN
    RETURN;
  END IF;
  EXECUTE format('REVOKE INSERT, UPDATE ON %I.webhook_deliveries FROM apikeys_runtime', s);
  EXECUTE format('GRANT UPDATE (status, attempts, next_attempt_at, last_status_code, last_error) ON %I.webhook_deliveries TO apikeys_runtime', s);
  EXECUTE format('REVOKE EXECUTE ON FUNCTION %I.webhook_deliveries_enqueue() FROM apikeys_runtime', s);
END
$$;
