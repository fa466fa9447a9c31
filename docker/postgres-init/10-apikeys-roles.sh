#!/bin/sh
# Run once by the postgres image when it creates the database (docker-entrypoint-initdb.d): the two
# roles of docs/operations.md, "Database roles". apikeys_owner owns the database and so the schema the
# migrations fill (MIGRATION_DATABASE_URL); apikeys_runtime owns nothing, and migration 0010 grants
# it what the service needs (DATABASE_URL). A shell script rather than plain SQL so the passwords come
# from the environment; psql's :'name' quotes them as literals.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v db="$POSTGRES_DB" -v owner_password="$APIKEYS_OWNER_PASSWORD" -v runtime_password="$APIKEYS_RUNTIME_PASSWORD" <<'SQL'
CREATE ROLE apikeys_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE apikeys_runtime LOGIN PASSWORD :'runtime_password';
ALTER DATABASE :"db" OWNER TO apikeys_owner;
SQL
