#!/usr/bin/env bash
# A Hearts Live cluster on this machine, without Docker: what compose.yaml runs, as plain
# processes. A private redis-server (deploy/redis.conf: append-only file, in a temp dir), a
# private PostgreSQL (initdb in the temp dir, on a free port: the store of record), N server
# nodes on consecutive ports sharing one HEARTS_SECRET, the Redis and the database
# (HEARTS_DATABASE_URL), optionally the standalone matchmaker, and HAProxy in front (config
# generated from deploy/haproxy.cfg).
#
#   deploy/local-cluster.sh                     # 3 nodes; play on http://127.0.0.1:8000
#   deploy/local-cluster.sh -n 2 -p 9000 --matchmaker
#   deploy/local-cluster.sh --redis-cluster     # on a Redis Cluster: 3 primaries, 3 replicas
#   deploy/local-cluster.sh --bot-workers 2     # bots searched by 2 bot workers, not the nodes
#   HEARTS_BOT_THINK=0 deploy/local-cluster.sh  # HEARTS_* / LOG_LEVEL pass through to the nodes
#
# Options:
#   -n, --nodes N       server nodes (default 3), on ports PORT+1 … PORT+N
#   -p, --port PORT     HAProxy's port (default 8000)
#   --matchmaker        run `python -m matchmaker` too (and turn the nodes' in-process ones off)
#   --bot-workers N     run N `python -m server.bot_worker` (one per core you give them) and send
#                       the nodes' bot decisions and hints to them (HEARTS_BOT_QUEUE=redis)
#   --redis-cluster     six redis-servers (deploy/redis-cluster.conf) joined into a Redis Cluster
#                       instead of one; one of them dying is reported, and its replica takes over
#   --keep              keep the temp dir (logs, AOF, the database, generated haproxy.cfg) after
#                       stopping
#
# Ctrl-C or SIGTERM stops everything, in order: HAProxy, the matchmaker, the nodes (they drain:
# sockets closed with 1012), PostgreSQL and Redis last. A node that dies on its own is reported
# and the rest run on; if Redis, PostgreSQL or HAProxy dies, everything stops and the logs are
# kept. Needs redis-server, PostgreSQL and haproxy (installed with apt-get when missing and
# running as root; PostgreSQL's initdb and pg_ctl are found on PATH or in the newest
# /usr/lib/postgresql/N/bin, and as root they run as the postgres user, since PostgreSQL
# refuses root); Python is .venv/bin/python if present ($PYTHON overrides).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODES=3
LB_PORT=8000
MATCHMAKER=0
KEEP=0
REDIS_CLUSTER=0
BOT_WORKERS=0

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        -n|--nodes) NODES=${2:?}; shift 2 ;;
        -p|--port) LB_PORT=${2:?}; shift 2 ;;
        --matchmaker) MATCHMAKER=1; shift ;;
        --redis-cluster) REDIS_CLUSTER=1; shift ;;
        --bot-workers) BOT_WORKERS=${2:?}; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
    esac
done
if ! [[ "$NODES" =~ ^[0-9]+$ ]] || (( NODES < 1 || NODES > 16 )); then
    echo "--nodes must be 1..16" >&2; exit 2
fi
if ! [[ "$BOT_WORKERS" =~ ^[0-9]+$ ]] || (( BOT_WORKERS > 64 )); then
    echo "--bot-workers must be 0..64" >&2; exit 2
fi
if ! [[ "$LB_PORT" =~ ^[0-9]+$ ]] || (( LB_PORT < 1024 || LB_PORT + NODES > 65535 )); then
    echo "--port must be 1024 or more and leave room for the nodes' ports above it" >&2; exit 2
fi
# The nodes import the project from the repository (python -m server).
cd "$ROOT"

PYTHON=${PYTHON:-}
if [[ -z "$PYTHON" ]]; then
    if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi

need_debian_package() {  # command, package
    command -v "$1" >/dev/null && return 0
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        echo "installing $2 (apt-get)…"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
    fi
    command -v "$1" >/dev/null || { echo "$1 is missing: apt-get install $2" >&2; exit 1; }
}
need_debian_package redis-server redis-server
need_debian_package haproxy haproxy
# PostgreSQL: Debian keeps initdb and pg_ctl off PATH (tests/support/postgres.py finds them the
# same way).
postgres_bin() {
    local found folder
    if found=$(command -v initdb) && command -v pg_ctl >/dev/null; then
        dirname "$(readlink -f "$found")"; return 0
    fi
    folder=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -1)
    [[ -n "$folder" && -x "$folder/initdb" ]] && echo "$folder"
}
if ! PG_BIN=$(postgres_bin); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        echo "installing postgresql (apt-get)…"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    fi
    PG_BIN=$(postgres_bin) || { echo "PostgreSQL is missing: apt-get install postgresql" >&2; exit 1; }
fi
# As root its commands run as the postgres user (Debian's package makes it), in a folder
# handed to that user.
AS_POSTGRES=()
if [[ $(id -u) -eq 0 ]]; then
    id -u postgres >/dev/null 2>&1 || { echo "no postgres user to run PostgreSQL as" >&2; exit 1; }
    AS_POSTGRES=(runuser -u postgres --)
fi
# A Debian install may start the packaged haproxy service; it has no frontend and takes no
# port, and this script never touches it.

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
http_ok() {  # url: 0 when it answers 200
    "$PYTHON" - "$1" <<'EOF' 2>/dev/null
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=1) as r:
    sys.exit(0 if r.status == 200 else 1)
EOF
}
wait_until() {  # seconds, description, command…  (fails at once if anything started died)
    local deadline=$((SECONDS + $1)) what=$2 entry; shift 2
    until "$@"; do
        for entry in "${STARTED[@]}"; do
            if ! kill -0 "${entry##*:}" 2>/dev/null; then
                echo "${entry%%:*} exited while waiting for $what" >&2; FAILED=1; return 1
            fi
        done
        if (( SECONDS >= deadline )); then echo "timed out waiting for $what" >&2; FAILED=1; return 1; fi
        sleep 0.2
    done
}

for port in "$LB_PORT" $(seq $((LB_PORT + 1)) $((LB_PORT + NODES))); do
    if port_in_use "$port"; then echo "port $port is in use (choose another with -p)" >&2; exit 1; fi
done
REDIS_PORT=$(free_port)
STATS_PORT=$(free_port)
PG_PORT=$(free_port)
# One secret for every node: a guest token signed by one node is checked by the others.
SECRET=${HEARTS_SECRET:-$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')}
WORK=$(mktemp -d -t hearts-cluster-XXXXXX)
mkdir -p "$WORK/redis" "$WORK/postgres"
# The database's own password (inside a URL: hex needs no escaping) and where it keeps its files.
PG_PASSWORD=$("$PYTHON" -c 'import secrets; print(secrets.token_hex(16))')
PG_DATA="$WORK/postgres/data"
if (( ${#AS_POSTGRES[@]} )); then
    chmod 711 "$WORK"  # the postgres user may pass through, not list
    chown postgres: "$WORK/postgres"
fi
chmod 700 "$WORK/postgres"

# name:pid of everything started, in start order; stopped in reverse.
STARTED=()
STOPPING=0
FAILED=0

stop_pid() {  # pid, seconds before SIGKILL
    local pid=$1 deadline=$((SECONDS + $2))
    kill -TERM "$pid" 2>/dev/null || return 0
    while kill -0 "$pid" 2>/dev/null; do
        if (( SECONDS >= deadline )); then kill -KILL "$pid" 2>/dev/null || true; break; fi
        sleep 0.1
    done
    wait "$pid" 2>/dev/null || true
}

# pg_ctl runs the server in the background by itself: it is stopped with pg_ctl too.
stop_postgres() {
    [[ -f "$PG_DATA/postmaster.pid" ]] || return 0
    "${AS_POSTGRES[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 15 stop >/dev/null 2>&1 \
        || "${AS_POSTGRES[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w stop >/dev/null 2>&1 \
        || true
}

pid_of() {  # name → pids
    local entry
    for entry in "${STARTED[@]}"; do [[ "${entry%%:*}" == "$1" ]] && echo "${entry##*:}"; done
    return 0
}

cleanup() {
    local status=$?
    (( STOPPING )) && return
    # Failed (not stopped by Ctrl-C / SIGTERM): keep the logs.
    [[ $status == 0 || $status == 130 || $status == 143 ]] || FAILED=1
    STOPPING=1
    trap '' INT TERM
    echo "stopping…"
    local pid entry stoppers=()
    # The balancer first (no new sockets), then the matchmaker and the nodes together (each
    # drains: its sockets close with 1012), the stores last, after every node has let go of them.
    for pid in $(pid_of haproxy); do stop_pid "$pid" 10; done
    for entry in "${STARTED[@]}"; do
        case "${entry%%:*}" in
            redis*|haproxy|postgres) ;;
            *) stop_pid "${entry##*:}" 15 & stoppers+=("$!") ;;
        esac
    done
    for pid in "${stoppers[@]}"; do wait "$pid" 2>/dev/null || true; done
    # A fast shutdown: open sessions end, a checkpoint is written.
    stop_postgres
    # On SIGTERM Redis fsyncs the append-only file and exits.
    for entry in "${STARTED[@]}"; do
        [[ "${entry%%:*}" == redis* ]] && stop_pid "${entry##*:}" 15
    done
    if (( KEEP || FAILED )); then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Each process gets its own session (setsid): a Ctrl-C in the terminal reaches this script only,
# which then stops them in order instead of all of them at once.
start() {  # name, log file, command…
    local name=$1 log=$2; shift 2
    setsid "$@" >"$log" 2>&1 &
    STARTED+=("$name:$!")
}

if (( REDIS_CLUSTER )); then
    # Six nodes with the cluster configuration; their bus ports are port + 10000.
    CLUSTER_PORTS=()
    while (( ${#CLUSTER_PORTS[@]} < 6 )); do
        port=$(free_port)
        (( port < 55000 )) && CLUSTER_PORTS+=("$port")
    done
    for (( i = 1; i <= 6; i++ )); do
        port=${CLUSTER_PORTS[i-1]}
        mkdir -p "$WORK/redis$i"
        start "redis$i" "$WORK/redis$i.log" redis-server "$ROOT/deploy/redis-cluster.conf" \
            --port "$port" --bind 127.0.0.1 --protected-mode yes --dir "$WORK/redis$i" \
            --cluster-preferred-endpoint-type ip
    done
    for port in "${CLUSTER_PORTS[@]}"; do
        redis_node_up() { redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; }
        wait_until 10 "redis-server on $port" redis_node_up
    done
    CREATE_ARGS=()
    for port in "${CLUSTER_PORTS[@]}"; do CREATE_ARGS+=("127.0.0.1:$port"); done
    redis-cli --cluster create "${CREATE_ARGS[@]}" \
        --cluster-replicas 1 --cluster-yes >"$WORK/redis-cluster-create.log" 2>&1 \
        || { cat "$WORK/redis-cluster-create.log" >&2; FAILED=1; exit 1; }
    cluster_ok() { redis-cli -p "${CLUSTER_PORTS[0]}" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }
    wait_until 30 "cluster_state:ok" cluster_ok
    REDIS_URL="redis+cluster://$(printf '127.0.0.1:%s,' "${CLUSTER_PORTS[@]}")"
    REDIS_URL=${REDIS_URL%,}
else
    # Redis with the deployment's configuration; only where it listens and writes differs.
    start redis "$WORK/redis.log" redis-server "$ROOT/deploy/redis.conf" \
        --port "$REDIS_PORT" --bind 127.0.0.1 --protected-mode yes --dir "$WORK/redis"
    REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
    redis_up() { redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; }
    wait_until 10 "redis-server" redis_up
fi

# PostgreSQL, the store of record: a cluster of its own in the temp dir, its socket there too
# (never the machine's /var/run/postgresql), TCP on loopback only. The superuser (postgres)
# connects only over that socket; the nodes log in as hearts with a password, as in compose.yaml.
"${AS_POSTGRES[@]}" "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C >"$WORK/postgres-initdb.log" 2>&1 \
    || { cat "$WORK/postgres-initdb.log" >&2; FAILED=1; exit 1; }
PG_MAX_CONNECTIONS=$(( NODES * 20 + 20 ))  # each node's pool (5, and 10 more at a peak), psql
"${AS_POSTGRES[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$WORK/postgres/postgres.log" -w -t 30 \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$WORK/postgres -c max_connections=$PG_MAX_CONNECTIONS" \
    start >"$WORK/postgres-start.log" 2>&1 \
    || { cat "$WORK/postgres-start.log" "$WORK/postgres/postgres.log" >&2; FAILED=1; exit 1; }
STARTED+=("postgres:$(head -1 "$PG_DATA/postmaster.pid")")
pg_sql() {
    "${AS_POSTGRES[@]}" "$PG_BIN/psql" -h "$WORK/postgres" -p "$PG_PORT" -U postgres -d postgres \
        -v ON_ERROR_STOP=1 -qAt "$@"
}
{ pg_sql -c "CREATE ROLE hearts LOGIN PASSWORD '$PG_PASSWORD'" \
    && pg_sql -c "CREATE DATABASE hearts OWNER hearts"; } >"$WORK/postgres-setup.log" 2>&1 \
    || { cat "$WORK/postgres-setup.log" >&2; FAILED=1; exit 1; }
DATABASE_URL="postgresql+asyncpg://hearts:$PG_PASSWORD@127.0.0.1:$PG_PORT/hearts"

node_env=(
    "REDIS_URL=$REDIS_URL" "HEARTS_SECRET=$SECRET" "HOST=127.0.0.1"
    "PUBLIC_URL=http://127.0.0.1:$LB_PORT" "HEARTS_DATABASE_URL=$DATABASE_URL"
)
(( MATCHMAKER )) && node_env+=("HEARTS_MATCHMAKER=0")
(( BOT_WORKERS )) && node_env+=("HEARTS_BOT_QUEUE=redis")
# Bot workers first: they read only Redis, and are ready when the first table asks.
BOT_PIDS=()
for (( i = 1; i <= BOT_WORKERS; i++ )); do
    start "bot-worker$i" "$WORK/bot-worker$i.log" \
        env "REDIS_URL=$REDIS_URL" "NODE_ID=local-bot-worker$i" "$PYTHON" -m server.bot_worker
    BOT_PIDS+=("${STARTED[-1]##*:}")
done
NODE_PIDS=()
for (( i = 1; i <= NODES; i++ )); do
    port=$((LB_PORT + i))
    start "node$i" "$WORK/node$i.log" \
        env "${node_env[@]}" "PORT=$port" "NODE_ID=local-node$i" "$PYTHON" -m server
    NODE_PIDS+=("${STARTED[-1]##*:}")
done
if (( MATCHMAKER )); then
    # No HEARTS_DATABASE_URL: the matchmaker reads only the queue (each entry carries the rating
    # its node read from the store of record), seats rooms in Redis and finishes no game.
    start matchmaker "$WORK/matchmaker.log" \
        env "REDIS_URL=$REDIS_URL" HEARTS_QUEUE_TTL=30 NODE_ID=local-matchmaker "$PYTHON" -m matchmaker
fi
for (( i = 1; i <= NODES; i++ )); do
    wait_until 30 "node$i (log: $WORK/node$i.log)" http_ok "http://127.0.0.1:$((LB_PORT + i))/readyz"
done

# HAProxy: deploy/haproxy.cfg with local addresses instead of the compose service names.
awk -v lb="$LB_PORT" -v stats="$STATS_PORT" -v first=$((LB_PORT + 1)) -v n="$NODES" '
    /^[ \t]*bind .*# @lb-bind/    { print "    bind 127.0.0.1:" lb; next }
    /^[ \t]*bind .*# @stats-bind/ { print "    bind 127.0.0.1:" stats; next }
    /^[ \t]*server node[0-9]+ /   { next }
    /^[ \t]*# @servers/           { print; for (i = 0; i < n; i++) printf "    server node%d 127.0.0.1:%d\n", i + 1, first + i; next }
    { print }
' "$ROOT/deploy/haproxy.cfg" >"$WORK/haproxy.cfg"
if ! haproxy -c -f "$WORK/haproxy.cfg" >"$WORK/haproxy-check.log" 2>&1; then
    cat "$WORK/haproxy-check.log" >&2; echo "the generated haproxy.cfg does not check" >&2; exit 1
fi
start haproxy "$WORK/haproxy.log" haproxy -db -f "$WORK/haproxy.cfg"
wait_until 15 "haproxy" http_ok "http://127.0.0.1:$LB_PORT/readyz"

cat >"$WORK/cluster.env" <<EOF
LB_URL=http://127.0.0.1:$LB_PORT
WS_URL=ws://127.0.0.1:$LB_PORT/ws
REDIS_URL=$REDIS_URL
DATABASE_URL=$DATABASE_URL
NODE_PIDS="${NODE_PIDS[*]}"
BOT_WORKER_PIDS="${BOT_PIDS[*]}"
EOF

if (( REDIS_CLUSTER )); then
    echo "Hearts Live: $NODES nodes behind HAProxy, a Redis Cluster (3 primaries, 3 replicas), PostgreSQL"
else
    echo "Hearts Live: $NODES nodes behind HAProxy, Redis with an append-only file, PostgreSQL"
fi
echo "  play        http://127.0.0.1:$LB_PORT/   (WebSocket ws://127.0.0.1:$LB_PORT/ws)"
for (( i = 1; i <= NODES; i++ )); do
    echo "  node$i       http://127.0.0.1:$((LB_PORT + i))/   pid ${NODE_PIDS[i-1]}"
done
(( MATCHMAKER )) && echo "  matchmaker  pid $(pid_of matchmaker)"
(( BOT_WORKERS )) && echo "  bot workers $BOT_WORKERS, pids ${BOT_PIDS[*]} (the nodes ask them through Redis)"
echo "  redis       $REDIS_URL"
echo "  postgres    $DATABASE_URL   pid $(pid_of postgres)"
echo "              psql: ${AS_POSTGRES[*]:+${AS_POSTGRES[*]} }$PG_BIN/psql -h $WORK/postgres -p $PG_PORT -U postgres hearts"
echo "  haproxy     stats on http://127.0.0.1:$STATS_PORT/"
echo "  logs        $WORK  (cluster.env there has the URLs and node pids)"
if (( REDIS_CLUSTER )); then
    echo "  load test   $PYTHON -m load_tests.load --url ws://127.0.0.1:$LB_PORT/ws$(printf ' --pid %s' "${NODE_PIDS[@]}")"
else
    echo "  load test   $PYTHON -m load_tests.load --url ws://127.0.0.1:$LB_PORT/ws \\"
    echo "                --redis-url $REDIS_URL$(printf ' --pid %s' "${NODE_PIDS[@]}")"
fi
echo "Ctrl-C or SIGTERM stops everything."

# Run until told to stop. A node or the matchmaker dying is what the cluster is built to
# survive (try `kill -TERM <node pid>` mid-game: its players reconnect through HAProxy), so it
# is reported and the rest run on; without Redis, PostgreSQL or HAProxy there is no service, so
# stop. PostgreSQL is no child of this script (pg_ctl started it), so no `wait` hears it end: a
# `sleep 1` child wakes the loop every second to look.
declare -A REPORTED=()
while true; do
    sleep 1 &
    wait -n || true
    for entry in "${STARTED[@]}"; do
        name=${entry%%:*}
        pid=${entry##*:}
        kill -0 "$pid" 2>/dev/null || [[ -n "${REPORTED[$name]:-}" ]] || {
            REPORTED[$name]=1
            case "$name" in
                redis|haproxy|postgres)
                    echo "$name exited; stopping the cluster" >&2; FAILED=1; exit 1 ;;
                redis[0-9]*)
                    echo "$name (pid $pid) exited; its replica takes over its slots (log: $WORK/$name.log)" >&2 ;;
                *)
                    echo "$name (pid $pid) exited; the others run on (log: $WORK/$name.log)" >&2 ;;
            esac
        }
    done
done
