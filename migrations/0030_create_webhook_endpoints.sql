-- Webhook endpoints (contract, "Events out: webhooks"): where the audit trail's events are pushed.
-- The signing secret must be usable to sign, so it is kept sealed under MASTER_KEY (AES-256-GCM,
-- bound to the endpoint's id) like an appkey, never in the clear. After a rotation the previous
-- secret stays, sealed the same way, until previous_secret_until (24 hours), and messages carry a
-- signature by each.
--
-- lease_id and leased_until belong to the dispatcher: an instance that sends an endpoint's messages
-- holds its lease, so one instance at a time delivers to one endpoint, in the order of the events
-- (src/webhooks/dispatcher.ts). A lease that is not renewed runs out, and another instance takes over.
CREATE TABLE webhook_endpoints (
  id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  url                        text NOT NULL,
  events                     text[] NOT NULL CHECK (cardinality(events) >= 1),
  description                text NOT NULL DEFAULT '',
  enabled                    boolean NOT NULL DEFAULT true,
  secret_ciphertext          bytea NOT NULL,
  previous_secret_ciphertext bytea,
  previous_secret_until      timestamptz,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  lease_id                   uuid,
  leased_until               timestamptz,
  CONSTRAINT webhook_endpoints_previous_secret_complete
    CHECK ((previous_secret_ciphertext IS NULL) = (previous_secret_until IS NULL))
);

-- The endpoints list is ordered by creation (then id), newest last, and paged by id.
CREATE INDEX webhook_endpoints_created_idx ON webhook_endpoints (created_at, id);
