-- The least-privileged runtime role (README, "Security model"). Migrations run as the role that owns
-- the schema (MIGRATION_DATABASE_URL); the service may run (DATABASE_URL) as apikeys_runtime, or as
-- any role granted membership in it. That role owns nothing: it reads and writes the service's
-- tables, but may only INSERT into and SELECT from audit_events (no UPDATE, DELETE or TRUNCATE), may
-- only read audit_retention (the owner sets the retention: the service does at start, over
-- MIGRATION_DATABASE_URL), and it cannot alter, drop or disable a table's triggers, which only the
-- owner can.
--
-- The role is named here rather than configured: a migration is the same SQL everywhere, and a
-- fixed name works whether or not the role exists. Without it (one role for everything, the
-- embedded database) this grants nothing and the service keeps running as the owner. Default
-- privileges carry the grants to tables later migrations create; only the audit trail and the
-- migrations' own record and the retention need a rule of their own. Functions are granted too, so
-- the runtime role can call prune_audit_events(), a SECURITY DEFINER function of the owner that 0009
-- revokes from PUBLIC: the only way it may delete old audit events, and only those older than the
-- owner's retention ("Running at scale").
DO $$
DECLARE
  s text := current_schema();
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'apikeys_runtime') THEN
    RAISE NOTICE 'role apikeys_runtime does not exist: no grants; the service runs as the schema owner';
    RETURN;
  END IF;
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO apikeys_runtime', s);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO apikeys_runtime', s);
  EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON %I.schema_migrations FROM apikeys_runtime', s);
  EXECUTE format('REVOKE UPDATE, DELETE ON %I.audit_events FROM apikeys_runtime', s);
  EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON %I.audit_retention FROM apikeys_runtime', s);
  EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO apikeys_runtime', s);
  EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO apikeys_runtime', s);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO apikeys_runtime', s);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT USAGE, SELECT ON SEQUENCES TO apikeys_runtime', s);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT EXECUTE ON FUNCTIONS TO apikeys_runtime', s);
END
$$;
