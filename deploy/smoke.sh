#!/usr/bin/env bash
# The container deployment, run for real: build the images, bring compose.yaml up (Redis with its
# append-only file, PostgreSQL, three nodes, HAProxy routing by room), play a whole game through the
# balancer with four scripted players, `docker kill` the node serving the room mid-hand, kill the
# Redis container and create a new one on its volume, check no acknowledged move was lost, tear
# down.
#
#   deploy/smoke.sh            # or: make deploy-test
#   deploy/smoke.sh --keep     # leave the stack up afterwards (docker-compose -p hearts-smoke …)
#
# Needs root (it starts dockerd when none answers, and installs docker.io, docker-compose and
# debootstrap with apt-get when missing). Docker Hub need not be reachable: every image is built
# on a local Debian base made once with debootstrap (cached in $HEARTS_BASE_DIR, default
# /var/cache/hearts-base/bookworm, imported as $HEARTS_BASE_IMAGE, default
# hearts-base:bookworm); Redis, PostgreSQL and HAProxy are Debian's packages on it
# (Dockerfile.redis, Dockerfile.postgres, Dockerfile.haproxy). Only the Debian mirror and
# PyPI are used. Prints `name: value` figures, ending with `moves_lost: N` and
# `games_archived: N` (the game in PostgreSQL). Exits non-zero when any step fails, keeping the
# containers' logs in the printed directory.
set -euo pipefail
# The whole script is one function, read before it runs: editing the file during a run (or a
# checkout changing it) cannot make bash execute a half-read line.
main() {
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE_DIR=${HEARTS_BASE_DIR:-/var/cache/hearts-base/bookworm}
BASE_IMAGE=${HEARTS_BASE_IMAGE:-hearts-base:bookworm}
PROJECT=hearts-smoke
KEEP=0
case "${1:-}" in
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    "") ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
esac
cd "$ROOT"
PYTHON=${PYTHON:-}
if [[ -z "$PYTHON" ]]; then
    if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
[[ $(id -u) -eq 0 ]] || { echo "run as root: it starts dockerd and builds images" >&2; exit 1; }
# The players are the project's own client: they need its dependencies (make sets them up).
"$PYTHON" -c 'import websockets, msgpack' 2>/dev/null \
    || { echo "$PYTHON lacks the project's dependencies: run make deploy-test" >&2; exit 1; }
# Builds are CPU- and disk-heavy on a shared machine: everything below runs niced.
renice -n 10 $$ >/dev/null

figure() { echo "$1: $2"; }
elapsed() { "$PYTHON" -c 'import sys, time; print(f"{time.time() - float(sys.argv[1]):.1f}")' "$1"; }
now() { "$PYTHON" -c 'import time; print(time.time())'; }

need_debian_package() {  # command, package
    command -v "$1" >/dev/null && return 0
    echo "installing $2 (apt-get)…" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
need_debian_package dockerd docker.io
need_debian_package docker-compose docker-compose
need_debian_package debootstrap debootstrap

# -- the engine ------------------------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
    mkdir -p /var/log/hearts-docker
    echo "starting dockerd (log: /var/log/hearts-docker/dockerd.log)…" >&2
    # Its own session: it outlives this script, like a system service would.
    # shellcheck disable=SC2086  # DOCKERD_FLAGS is a list of flags
    setsid dockerd ${DOCKERD_FLAGS:-} >>/var/log/hearts-docker/dockerd.log 2>&1 < /dev/null &
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
    docker info >/dev/null 2>&1 || { tail -20 /var/log/hearts-docker/dockerd.log >&2; exit 1; }
fi
figure storage_driver "$(docker info --format '{{.Driver}}')"

# -- the local base: Debian 12 (Python 3.11), what python:3.11-slim would give ---------------
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    base_start=$(now)
    if [[ ! -x "$BASE_DIR/usr/bin/python3" ]]; then
        echo "debootstrap bookworm into $BASE_DIR (once; a few minutes)…" >&2
        rm -rf "$BASE_DIR.partial"
        mkdir -p "$(dirname "$BASE_DIR")"
        debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
            bookworm "$BASE_DIR.partial" http://deb.debian.org/debian >"$BASE_DIR.log" 2>&1 \
            || { tail -20 "$BASE_DIR.log" >&2; exit 1; }
        mv "$BASE_DIR.partial" "$BASE_DIR"
    fi
    # As Debian's own container images do: no services started by package scripts, no
    # documentation or recommends installed, no package lists or downloaded archives kept.
    printf '#!/bin/sh\nexit 101\n' >"$BASE_DIR/usr/sbin/policy-rc.d"
    chmod +x "$BASE_DIR/usr/sbin/policy-rc.d"
    cat >"$BASE_DIR/etc/dpkg/dpkg.cfg.d/01-container" <<'EOF'
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
    cat >"$BASE_DIR/etc/apt/apt.conf.d/01-container" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
EOF
    cat >"$BASE_DIR/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
    # The builds reach PyPI and the mirror through whatever TLS this host trusts: give the base
    # this host's extra certificate authorities (none on an ordinary machine).
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$BASE_DIR/usr/local/share/ca-certificates/"
        chroot "$BASE_DIR" update-ca-certificates >/dev/null 2>&1
    fi
    rm -rf "$BASE_DIR"/var/cache/apt/archives/*.deb "$BASE_DIR"/var/cache/apt/*.bin \
        "$BASE_DIR"/var/lib/apt/lists/* "$BASE_DIR"/usr/share/doc/* "$BASE_DIR"/usr/share/man/* \
        "$BASE_DIR"/usr/share/info/* "$BASE_DIR"/var/log/*.log
    find "$BASE_DIR/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
    tar --numeric-owner -C "$BASE_DIR" -c . \
        | docker import -c 'CMD ["/bin/bash"]' -c 'ENV LANG=C.UTF-8' - "$BASE_IMAGE" >/dev/null
    figure base_build_s "$(elapsed "$base_start")"
fi
figure base_image_mb "$(( $(docker image inspect "$BASE_IMAGE" --format '{{.Size}}') / 1000000 ))"

# -- the images ------------------------------------------------------------------------------
# The context is exactly what the Dockerfile copies (Dockerfile.dockerignore's list), sent as a
# tar: the legacy builder reads no per-Dockerfile ignore file, and .venv must not be sent.
BUILD_LOG=$(mktemp -t hearts-build-XXXXXX.log)
build() {  # tag, dockerfile (as named inside the context), tar arguments for the context…
    local tag=$1 file=$2; shift 2
    tar --exclude=__pycache__ --exclude='*.pyc' -c "$@" \
        | nice -n 19 docker build -f "$file" --build-arg "BASE=$BASE_IMAGE" -t "$tag" - \
            >>"$BUILD_LOG" 2>&1 || { tail -30 "$BUILD_LOG" >&2; echo "building $tag failed" >&2; exit 1; }
}
build_start=$(now)
build hearts-live:local deploy/Dockerfile \
    pyproject.toml README.md protocol server matchmaker deploy/Dockerfile
build hearts-redis:local Dockerfile.redis -C deploy Dockerfile.redis
build hearts-postgres:local Dockerfile.postgres -C deploy Dockerfile.postgres postgres-entrypoint.sh
build hearts-haproxy:local Dockerfile.haproxy -C deploy Dockerfile.haproxy
rm -f "$BUILD_LOG"
figure build_s "$(elapsed "$build_start")"
figure image_mb "$(( $(docker image inspect hearts-live:local --format '{{.Size}}') / 1000000 ))"
figure image_user "$(docker image inspect hearts-live:local --format '{{.Config.User}}')"

# -- up --------------------------------------------------------------------------------------
free_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
LB_PORT=$(free_port)
STATS_PORT=$(free_port)
export HEARTS_SECRET POSTGRES_PASSWORD HEARTS_IMAGE=hearts-live:local REDIS_IMAGE=hearts-redis:local \
    POSTGRES_IMAGE=hearts-postgres:local HAPROXY_IMAGE=hearts-haproxy:local HEARTS_BASE=$BASE_IMAGE \
    HEARTS_LISTEN=127.0.0.1:$LB_PORT HEARTS_STATS_LISTEN=127.0.0.1:$STATS_PORT \
    PUBLIC_URL=http://127.0.0.1:$LB_PORT
HEARTS_SECRET=$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')
POSTGRES_PASSWORD=$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')
compose() { docker-compose -p "$PROJECT" -f deploy/compose.yaml "$@"; }
LOGS=$(mktemp -d -t hearts-smoke-XXXXXX)

# shellcheck disable=SC2317  # run by the EXIT trap
teardown() {
    local status=$?
    compose logs --no-color >"$LOGS/compose.log" 2>&1 || true
    if (( KEEP )); then
        echo "left running: docker-compose -p $PROJECT -f deploy/compose.yaml …; http://127.0.0.1:$LB_PORT" >&2
    else
        compose down -v --remove-orphans >/dev/null 2>&1 || true
    fi
    if (( status != 0 )); then echo "failed; logs in $LOGS" >&2; else rm -rf "$LOGS"; fi
}
trap teardown EXIT

up_start=$(now)
compose up -d --no-build >"$LOGS/up.log" 2>&1 || { cat "$LOGS/up.log" >&2; exit 1; }
ready=0
for _ in $(seq 240); do
    if "$PYTHON" - "http://127.0.0.1:$LB_PORT/readyz" <<'EOF' 2>/dev/null; then ready=1; break; fi
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=1) as r:
    sys.exit(0 if r.status == 200 else 1)
EOF
    sleep 0.25
done
(( ready )) || { echo "/readyz never answered through the balancer" >&2; exit 1; }
figure time_to_ready_s "$(elapsed "$up_start")"
# The image's HEALTHCHECK, as Docker runs it (its first check comes ~10 s after the start).
healthy=0
for _ in $(seq 60); do
    healthy=0
    for service in node1 node2 node3; do
        status=$(docker inspect -f '{{.State.Health.Status}}' "$(compose ps -q "$service")")
        [[ $status == healthy ]] && healthy=$((healthy + 1))
    done
    (( healthy == 3 )) && break
    sleep 0.5
done
figure nodes_healthy "$healthy/3"
figure time_to_healthy_s "$(elapsed "$up_start")"
figure redis_appendonly "$(compose exec -T redis redis-cli config get appendonly | tail -1)"
# The nodes migrated the store of record at start: its revision, as PostgreSQL has it.
figure postgres_schema "$(compose exec -T postgres psql -U hearts -d hearts -tAc 'SELECT version_num FROM alembic_version')"

# -- the game, the kill, the Redis restart ---------------------------------------------------
PYTHONPATH=$ROOT "$PYTHON" deploy/smoke_play.py --url "http://127.0.0.1:$LB_PORT" \
    --compose "docker-compose -p $PROJECT -f deploy/compose.yaml"

# -- the store of record ---------------------------------------------------------------------
# The finished game is in PostgreSQL: the next tick of any node archives it from the room's
# outbox (docs/architecture.md, "What lives where").
archived=0
for _ in $(seq 40); do
    archived=$(compose exec -T postgres psql -U hearts -d hearts -tAc 'SELECT count(*) FROM games' | tr -d '[:space:]')
    (( archived >= 1 )) && break
    sleep 0.5
done
figure games_archived "$archived"
(( archived >= 1 )) || { echo "the finished game never reached PostgreSQL" >&2; exit 1; }
}
main "$@"; exit $?
