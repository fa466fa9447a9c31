#!/bin/sh
# Writes PgBouncer's auth file from APIKEYS_RUNTIME_ROLE and APIKEYS_RUNTIME_PASSWORD (never into the
# image), readable by this user only, then runs PgBouncer in the foreground. The instances log in as
# the deployment's runtime role, which owns nothing (docs: database roles); migrations go straight to
# the server as the owner.
set -eu
: "${APIKEYS_RUNTIME_ROLE:?APIKEYS_RUNTIME_ROLE is not set}"
: "${APIKEYS_RUNTIME_PASSWORD:?APIKEYS_RUNTIME_PASSWORD is not set}"
umask 077
quoted() { printf '%s' "$1" | sed 's/"/""/g'; }
printf '"%s" "%s"\n' "$(quoted "$APIKEYS_RUNTIME_ROLE")" "$(quoted "$APIKEYS_RUNTIME_PASSWORD")" > /run/pgbouncer/userlist.txt
exec pgbouncer /etc/pgbouncer/pgbouncer.ini
