-- Security events, append-only: the service only ever INSERTs here, and the triggers below refuse
-- UPDATE, DELETE and TRUNCATE from anyone, so no route, bug or stray script can rewrite history.
-- Events name principals by appname/username (not by foreign key) so they outlive what they describe.
-- details never holds a secret: roles, reasons, routes, session ids.
CREATE TABLE audit_events (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  occurred_at    timestamptz NOT NULL DEFAULT now(),
  type           text NOT NULL,
  actor          text NOT NULL,
  appname        text COLLATE "C",
  username       text COLLATE "C",
  client_address text,
  request_id     text,
  details        jsonb NOT NULL DEFAULT '{}'
);

CREATE INDEX audit_events_appname_idx ON audit_events (appname, id) WHERE appname IS NOT NULL;
CREATE INDEX audit_events_username_idx ON audit_events (username, id) WHERE username IS NOT NULL;
CREATE INDEX audit_events_actor_idx ON audit_events (actor, id);
CREATE INDEX audit_events_occurred_at_idx ON audit_events (occurred_at);

CREATE FUNCTION audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP;
END
$$;

CREATE TRIGGER audit_events_no_update_or_delete
  BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_refuse_change();

CREATE TRIGGER audit_events_no_truncate
  BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_refuse_change();
