-- Every audit event becomes a message for each enabled endpoint subscribed to its type (or to "*"),
-- in the statement that records the event: the same transaction, whichever code wrote it
-- (recordAuditEvent, the data-modifying CTEs that open sessions in batches, writers yet to come).
-- A statement-level trigger with a transition table makes that one INSERT ... SELECT per statement,
-- not one per event; with no endpoint it joins against an empty table and inserts nothing.
--
-- webhook.tested (POST /api/v1/webhooks/{id}/test) goes to the endpoint it names alone, subscribed
-- or not, so a test of one endpoint is never sent to the others.
--
-- SECURITY DEFINER, owned by the schema owner that runs the migrations: the runtime role may not
-- INSERT into webhook_deliveries itself (0033 guards the table), so it can neither forge a message nor address one
-- to an endpoint of its choosing; it gets messages only by writing audit events. The search_path is
-- pinned to this schema, so a caller cannot put tables of its own in the function's way.
CREATE FUNCTION webhook_deliveries_enqueue() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER
AS $$
BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, audit_event_id, type)
  SELECT w.id, e.id, e.type
    FROM new_events e
    JOIN webhook_endpoints w
      ON w.enabled
     AND CASE WHEN e.type = 'webhook.tested' THEN w.id::text = e.details ->> 'webhook_id'
              ELSE e.type = ANY (w.events) OR '*' = ANY (w.events) END
   ORDER BY e.id;
  RETURN NULL;
END
$$;

DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION webhook_deliveries_enqueue() SET search_path = %I, pg_temp', current_schema());
END
$$;

REVOKE EXECUTE ON FUNCTION webhook_deliveries_enqueue() FROM PUBLIC;

CREATE TRIGGER audit_events_to_webhooks
  AFTER INSERT ON audit_events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_enqueue();
