-- The outbox: one row per message (an audit event for one endpoint). Rows are written by the trigger
-- of 0032 in the transaction of the event itself, so a message exists exactly when its event does
-- and survives a crash or a restart; the dispatcher sends it, records each attempt, and marks it
-- delivered or, after the last retry, failed. Maintenance deletes finished rows after
-- WEBHOOK_RETENTION_DAYS.
--
-- The id is the message's `webhook-id`: a UUID whose first 48 bits are the time in milliseconds
-- (the layout of UUIDv7, RFC 9562), so ids sort by creation, the delivery log pages by id, and
-- pruning finds old rows through the primary key. Random in the rest, so a receiver that keeps
-- the ids it has seen never mistakes a message for one from before a reinstall.
CREATE FUNCTION webhook_message_id() RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(
           set_bit(set_bit(
             overlay(uuid_send(gen_random_uuid())
                     PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                     FROM 1 FOR 6),
             52, 1), 53, 1),
           'hex')::uuid
$$;

-- The audit event is referred to, not copied: events are append-only, so the body sent is the same
-- at every attempt. No foreign key: audit retention deletes events on its own terms (0009).
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY DEFAULT webhook_message_id(),
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  audit_event_id   bigint NOT NULL,
  type             text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- Pending: when it is due (now, or the retry's time). Null once delivered or failed.
  next_attempt_at  timestamptz DEFAULT now(),
  last_status_code integer,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_deliveries_due_while_pending CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);

-- What the dispatcher looks for: an endpoint's due messages. Partial: finished rows, the bulk of the
-- table, are not in it.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
-- The delivery log of one endpoint, newest first.
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id);
