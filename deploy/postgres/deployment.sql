-- One deployment's database and its two roles, all named after the deployment, so that deployments
-- sharing a PostgreSQL server share nothing: neither role of one can log in to another's database,
-- and the migrations grant only to this deployment's runtime role (docs: database roles).
--
--   psql -v ON_ERROR_STOP=1 -v deployment=billing_prod \
--        -v owner_password="$(openssl rand -hex 24)" -v runtime_password="$(openssl rand -hex 24)" \
--        -f deploy/postgres/deployment.sql
--
-- makes roles billing_prod_owner (owns the database and the schema the migrations fill:
-- MIGRATION_DATABASE_URL) and billing_prod_runtime (owns nothing: DATABASE_URL), and the database
-- billing_prod unless it exists. Run as a superuser (or a role with CREATEROLE and CREATEDB).
\set owner :deployment '_owner'
\set runtime :deployment '_runtime'

CREATE ROLE :"owner" LOGIN PASSWORD :'owner_password';
CREATE ROLE :"runtime" LOGIN PASSWORD :'runtime_password';
SELECT format('CREATE DATABASE %I OWNER %I', :'deployment', :'owner')
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'deployment') \gexec
ALTER DATABASE :"deployment" OWNER TO :"owner";

-- Only this deployment's roles may connect (PUBLIC may, by default, connect to every database).
REVOKE ALL ON DATABASE :"deployment" FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE :"deployment" TO :"owner";
GRANT CONNECT ON DATABASE :"deployment" TO :"runtime";

-- In the new database: the schema public belongs to its owner, and no one else creates objects there
-- or looks into it (the migrations grant the runtime role what it needs).
\c :"deployment"
ALTER SCHEMA public OWNER TO :"owner";
REVOKE ALL ON SCHEMA public FROM PUBLIC;
