#!/bin/sh
# Writes PgBouncer's auth file from APIKEYS_RUNTIME_PASSWORD (never into the image), readable by this
# user only, then runs PgBouncer in the foreground. The instances log in as apikeys_runtime, the role
# that owns nothing (docs/operations.md, "Database roles"); migrations go straight to the server as the owner.
set -eu
: "${APIKEYS_RUNTIME_PASSWORD:?APIKEYS_RUNTIME_PASSWORD is not set}"
umask 077
printf '"apikeys_runtime" "%s"\n' "$(printf '%s' "$APIKEYS_RUNTIME_PASSWORD" | sed 's/"/""/g')" > /run/pgbouncer/userlist.txt
exec pgbouncer /etc/pgbouncer/pgbouncer.ini
