-- The dispatcher reads an endpoint's pending messages in the order of their events, a batch at a
-- time (readDueMessages in src/webhooks/deliveries.repository.ts). The due index gave them by due
-- time, so every read sorted all of the endpoint's pending messages to take the first hundred: a
-- read cost that grew with the backlog it was there to clear. Read along this index it stops at
-- the batch's size. The due index stays for leasing and for the age of the oldest due message.
CREATE INDEX webhook_deliveries_pending_in_event_order_idx ON webhook_deliveries (endpoint_id, audit_event_id, id) WHERE status = 'pending';
