-- The runtime role is this deployment's own (Hardening, round two). 0010 and 0011 granted to a role
-- of a fixed, cluster-wide name, apikeys_runtime, whenever one existed: two deployments on one
-- PostgreSQL server then shared it, and one deployment's runtime login could read and write the
-- other's tables. From here on the grants go to the role the service is configured to run as, which
-- the migrator names in the transaction setting apikeys.runtime_role (DATABASE_RUNTIME_ROLE, or the
-- user of DATABASE_URL when MIGRATION_DATABASE_URL is set), and which it grants to again after every
-- migration run through grant_runtime_privileges(): a role created or renamed later gets them too.
--
-- Whatever 0010 and 0011 gave apikeys_runtime in this schema is taken back unless apikeys_runtime is
-- this deployment's runtime role (deployments that named their role so keep working unchanged).

CREATE FUNCTION grant_runtime_privileges(runtime text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s text := current_schema();
BEGIN
  IF runtime IS NULL OR runtime = current_user THEN
    RETURN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = runtime) THEN
    RAISE EXCEPTION 'the runtime role % does not exist: create it before migrating (docs: database roles)', runtime;
  END IF;
  -- What 0010 and 0011 granted: read and write the service's tables; the audit trail insert-only, and
  -- only an event's facts (its time and id come from the table); the retention and the migrations'
  -- record read-only; the functions, for prune_audit_events(); the same for tables made later.
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', s, runtime);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO %I', s, runtime);
  EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON %I.schema_migrations FROM %I', s, runtime);
  EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON %I.audit_events FROM %I', s, runtime);
  EXECUTE format('GRANT INSERT (type, actor, appname, username, client_address, request_id, details) ON %I.audit_events TO %I', s, runtime);
  EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON %I.audit_retention FROM %I', s, runtime);
  EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO %I', s, runtime);
  EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO %I', s, runtime);
  EXECUTE format('REVOKE EXECUTE ON FUNCTION %I.grant_runtime_privileges(text) FROM %I', s, runtime);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', s, runtime);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT USAGE, SELECT ON SEQUENCES TO %I', s, runtime);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT EXECUTE ON FUNCTIONS TO %I', s, runtime);
END
$$;
-- Only the owner grants: no one else may call it (functions are executable by PUBLIC by default).
REVOKE EXECUTE ON FUNCTION grant_runtime_privileges(text) FROM PUBLIC;

DO $$
DECLARE
  s text := current_schema();
  runtime text := NULLIF(current_setting('apikeys.runtime_role', true), '');
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'apikeys_runtime') AND runtime IS DISTINCT FROM 'apikeys_runtime' THEN
    EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA %I FROM apikeys_runtime', s);
    EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA %I FROM apikeys_runtime', s);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA %I FROM apikeys_runtime', s);
    EXECUTE format('REVOKE ALL ON SCHEMA %I FROM apikeys_runtime', s);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I REVOKE ALL ON TABLES FROM apikeys_runtime', s);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I REVOKE ALL ON SEQUENCES FROM apikeys_runtime', s);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I REVOKE ALL ON FUNCTIONS FROM apikeys_runtime', s);
  END IF;
END
$$;
