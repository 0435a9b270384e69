#!/bin/sh
# The entry point of deploy/Dockerfile.postgres: what the official postgres image's own does for
# compose.yaml, with Debian's PostgreSQL. On an empty data directory it runs initdb with
# POSTGRES_USER (default postgres) as the superuser and POSTGRES_PASSWORD as its password,
# allows password (scram-sha-256) connections from any address, and creates POSTGRES_DB (default:
# the user's name); on a data directory that has a cluster it only starts it. Then PostgreSQL
# runs in the foreground as PID 1, listening on every address of the container.
#
# Run as the postgres user. PGDATA (default /var/lib/postgresql/data) and PG_BIN (default
# /usr/lib/postgresql/15/bin) can be set for a run outside the image.
set -eu

PGDATA=${PGDATA:-/var/lib/postgresql/data}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
export PGDATA

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set to create the database}"
    user=${POSTGRES_USER:-postgres}
    database=${POSTGRES_DB:-$user}
    mkdir -p "$PGDATA"
    chmod 700 "$PGDATA"
    password_file=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
    "$PG_BIN/initdb" -D "$PGDATA" -U "$user" --pwfile="$password_file" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$password_file"
    # Every address may connect, with the password (initdb allowed only loopback).
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "$database" != postgres ]; then
        # On a private socket only, so nothing connects before the database exists.
        setup_socket=$(mktemp -d)
        "$PG_BIN/pg_ctl" -D "$PGDATA" -w -t 60 \
            -o "-c listen_addresses='' -c unix_socket_directories=$setup_socket" start >/dev/null
        "$PG_BIN/psql" -h "$setup_socket" -U "$user" -d postgres -v ON_ERROR_STOP=1 -q \
            -c "CREATE DATABASE \"$database\"" >/dev/null
        "$PG_BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
        rmdir "$setup_socket"
    fi
    echo "made a new database cluster in $PGDATA (user $user, database $database)"
fi

exec "$PG_BIN/postgres" -D "$PGDATA" -c listen_addresses='*' "$@"
