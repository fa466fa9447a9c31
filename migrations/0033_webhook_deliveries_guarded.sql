-- The runtime role may not forge, readdress or rewrite a message. Every migration run gives it the
-- rights of 0012 (grant_runtime_privileges: every table's SELECT, INSERT, UPDATE and DELETE, beyond
-- the audit trail's), and the dispatcher needs UPDATE (an attempt's outcome) and DELETE (pruning;
-- an endpoint's deletion cascades). So the outbox guards itself, whatever the grants, with two
-- triggers that call their function only when refusing (the WHEN conditions are checked in C):
--   INSERT by anyone but the schema owner is refused: messages come only from audit events, through
--     the trigger of 0032, whose function runs as the owner (SECURITY DEFINER);
--   an UPDATE that changes which message it is (id), or the endpoint, event or type it is about, is
--     refused to everyone: nothing legitimate ever changes them.
-- The runtime role owns neither table nor trigger, so it can neither drop nor disable them.
CREATE FUNCTION webhook_deliveries_refuse_forgery() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'webhook_deliveries: % refused: messages come only from audit events, and keep their endpoint and event', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$$;

REVOKE EXECUTE ON FUNCTION webhook_deliveries_refuse_forgery() FROM PUBLIC;

DO $$
BEGIN
  EXECUTE format(
    'CREATE TRIGGER webhook_deliveries_only_from_events BEFORE INSERT ON webhook_deliveries FOR EACH ROW '
    'WHEN (current_user <> %L) EXECUTE FUNCTION webhook_deliveries_refuse_forgery()',
    current_user);
END
$$;

CREATE TRIGGER webhook_deliveries_keep_identity
  BEFORE UPDATE ON webhook_deliveries FOR EACH ROW
  WHEN (NEW.id IS DISTINCT FROM OLD.id OR NEW.endpoint_id IS DISTINCT FROM OLD.endpoint_id
        OR NEW.audit_event_id IS DISTINCT FROM OLD.audit_event_id OR NEW.type IS DISTINCT FROM OLD.type)
  EXECUTE FUNCTION webhook_deliveries_refuse_forgery();
