#!/bin/sh
# Writes PgBouncer's auth file from POSTGRES_PASSWORD (never into the image), readable by this user
# only, then runs PgBouncer in the foreground.
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set}"
umask 077
printf '"apikeys" "%s"\n' "$(printf '%s' "$POSTGRES_PASSWORD" | sed 's/"/""/g')" > /run/pgbouncer/userlist.txt
exec pgbouncer /etc/pgbouncer/pgbouncer.ini
