#!/bin/sh
# Run once by the postgres image when it creates the database (docker-entrypoint-initdb.d): the two
# roles of this deployment, named after it (APIKEYS_DEPLOYMENT, also POSTGRES_DB), by the same script
# the docs give for any server (deploy/postgres/deployment.sql, mounted at /apikeys-sql). The owner
# owns the database and so the schema the migrations fill (MIGRATION_DATABASE_URL); the runtime role
# owns nothing, and the migrations grant it what the service needs (DATABASE_URL). A shell script
# rather than plain SQL so the passwords come from the environment; psql's :'name' quotes them.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v deployment="$POSTGRES_DB" -v owner_password="$APIKEYS_OWNER_PASSWORD" -v runtime_password="$APIKEYS_RUNTIME_PASSWORD" \
  -f /apikeys-sql/deployment.sql
