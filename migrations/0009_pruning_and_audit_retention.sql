-- Pruning in bounded batches (src/maintenance.ts) and audit retention (AUDIT_RETENTION_DAYS).

-- Revoked sessions are pruned like expired ones; without this index each pruning batch would scan
-- the whole table for them. Partial: live sessions (revoked_at NULL) are not in it, and a refresh
-- rotation, which does not touch revoked_at, stays a HOT update.
CREATE INDEX sessions_revoked_at_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;

-- Likewise for the previous appkeys whose grace has ended: only keys in a grace are in it.
CREATE INDEX api_keys_previous_key_valid_until_idx ON api_keys (previous_key_valid_until) WHERE previous_key_valid_until IS NOT NULL;

-- Audit retention. The trail stays append-only except for one way out:
-- prune_audit_events(), which deletes a bounded batch of events older than the retention kept in
-- audit_retention, never one younger than a day. It runs as its owner (SECURITY DEFINER, the schema
-- owner that runs the migrations), so a runtime role with no DELETE right on audit_events can still
-- prune through it and through nothing else. UPDATE and TRUNCATE stay refused to everyone.

-- The retention in days (0 keeps every event), one row. The function reads it here rather than take
-- it from its caller: whoever may call the function (the runtime role) would otherwise choose how
-- much of the trail to delete. The service writes AUDIT_RETENTION_DAYS here at start as the schema
-- owner; the runtime role may only read it (0010).
CREATE TABLE audit_retention (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  days integer NOT NULL CHECK (days >= 0)
);
INSERT INTO audit_retention (days) VALUES (400);

DROP TRIGGER audit_events_no_update_or_delete ON audit_events;

CREATE TRIGGER audit_events_no_update
  BEFORE UPDATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_refuse_change();

-- A DELETE passes only for rows older than audit_events.delete_before, a setting that
-- prune_audit_events() makes for its own DELETE (whole seconds since the epoch, so it reads back
-- exactly), and only when that moment lies at least a day back. Unset or empty, every DELETE is
-- refused, as before this migration. A role with DELETE rights on the table could make the setting
-- itself, and then delete no more than the function would: nothing younger than a day. A role
-- without DELETE rights (the runtime role) cannot delete at all, except through the function.
CREATE FUNCTION audit_events_refuse_recent_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delete_before timestamptz := to_timestamp(nullif(current_setting('audit_events.delete_before', true), '')::bigint);
BEGIN
  IF delete_before IS NULL OR delete_before > now() - interval '1 day' OR OLD.occurred_at >= delete_before THEN
    RAISE EXCEPTION 'audit_events is append-only: DELETE refused';
  END IF;
  RETURN OLD;
END
$$;

CREATE TRIGGER audit_events_delete_only_expired
  BEFORE DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_recent_delete();

-- Deletes at most batch_size (1..1000) of the oldest events that occurred more than
-- audit_retention.days ago and returns how many it deleted (0, and nothing deleted, when the
-- retention is 0); the caller repeats, one transaction per batch, until it returns less than
-- batch_size. The setting is made with set_config(..., true), which lasts at most to the end of the
-- transaction (and is undone with it on an error), and is cleared again before returning. Not a
-- SET clause on the function: PostgreSQL 15 checks a SET of a custom parameter against the
-- privileges of the role creating the function, and refuses it to an owner that is not a superuser.
CREATE FUNCTION prune_audit_events(batch_size integer) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER
AS $$
DECLARE
  retention_days integer;
  delete_before timestamptz;
  deleted integer;
BEGIN
  IF batch_size IS NULL OR batch_size < 1 OR batch_size > 1000 THEN
    RAISE EXCEPTION 'prune_audit_events: the batch size must be 1 to 1000, not %', batch_size;
  END IF;
  SELECT days INTO retention_days FROM audit_retention;
  IF retention_days IS NULL OR retention_days = 0 THEN
    RETURN 0;
  END IF;
  delete_before := date_trunc('second', now() - make_interval(days => retention_days));
  PERFORM set_config('audit_events.delete_before', extract(epoch FROM delete_before)::bigint::text, true);
  DELETE FROM audit_events
   WHERE id IN (SELECT id FROM audit_events WHERE occurred_at < delete_before ORDER BY occurred_at LIMIT batch_size);
  GET DIAGNOSTICS deleted = ROW_COUNT;
  PERFORM set_config('audit_events.delete_before', '', true);
  RETURN deleted;
END
$$;

-- A SECURITY DEFINER function must not resolve names through its caller's search_path (a caller
-- could put a table of its own named audit_events or audit_retention first): pin it to the schema
-- migrated here.
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION prune_audit_events(integer) SET search_path = %I, pg_temp', current_schema());
END
$$;

-- Functions are executable by PUBLIC by default: only the owner, and the runtime role that 0010
-- grants it to, may prune.
REVOKE EXECUTE ON FUNCTION prune_audit_events(integer) FROM PUBLIC;
