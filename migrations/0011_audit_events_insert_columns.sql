-- The runtime role may write an audit event's facts but not its time or its id: INSERT is granted
-- on the columns the service writes, so occurred_at always comes from the table's default, now(),
-- and the id from its identity. Without this, a runtime role could back-date an event (and so
-- hand it to pruning early) or choose its place in the trail (OVERRIDING SYSTEM VALUE). Like 0010,
-- this grants nothing where the role does not exist.
DO $$
DECLARE
  s text := current_schema();
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'apikeys_runtime') THEN
    RETURN;
  END IF;
  EXECUTE format('REVOKE INSERT ON %I.audit_events FROM apikeys_runtime', s);
  EXECUTE format('GRANT INSERT (type, actor, appname, username, client_address, request_id, details) ON %I.audit_events TO apikeys_runtime', s);
END
$$;
