"""Configuration from environment variables, with defaults that run on a fresh machine."""

from __future__ import annotations

import logging
import os
import secrets
import socket
from dataclasses import dataclass, field

from server.accounts.service import AccountPolicy
from server.core.room.state import Clocks

log = logging.getLogger(__name__)


def choose_redis_url(cluster: str | None, single: str | None) -> str | None:
    """``REDIS_CLUSTER_URL`` (a Redis Cluster, any of its nodes as seeds) wins over
    ``REDIS_URL``; a ``redis+cluster://`` scheme in ``REDIS_URL`` selects the cluster too."""
    if cluster:
        from server.store.redis.client.connect import cluster_url

        return cluster_url(cluster)
    return single or None


BOT_QUEUES = ("pool", "redis")


def bot_queue(raw: str | None) -> str:
    """``HEARTS_BOT_QUEUE``: unset or "pool" (the node's own processes), or "redis"."""
    value = (raw or "pool").strip().lower()
    if value not in BOT_QUEUES:
        raise ValueError(f"HEARTS_BOT_QUEUE must be one of {BOT_QUEUES}, not {raw!r}")
    return value


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw not in (None, "") else default


@dataclass(frozen=True, slots=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    redis_url: str | None = None  # None: the embedded in-process store (one node)
    # The store of record (server/record): postgresql+asyncpg://… for a deployment; None: a
    # SQLite file in the data folder (server/record/engine.py default_data_dir).
    database_url: str | None = None
    # Acknowledge a commit only once this many replicas have it (WAIT), waiting at most
    # redis_wait_ms; 0: Redis's asynchronous replication (see docs/cluster.md).
    redis_wait_replicas: int = 0
    redis_wait_ms: int = 50
    # Signs guest tokens; every node of a deployment must share it. b"": the key kept in the
    # store of record (made by the first node to start, kept across restarts).
    secret: bytes = b""
    public_url: str = ""  # base of invite links; default http://HOST:PORT
    node_id: str = field(default_factory=lambda: f"{socket.gethostname()}-{secrets.token_hex(3)}")
    clocks: Clocks = field(default_factory=Clocks)
    scheduler_interval: float = 0.05
    bot_fill_after: float = 20.0  # quick play: seconds before empty seats go to bots
    outage_after: float = 5.0  # a heartbeat gap longer than this was a whole-service outage
    bot_workers: int = 1  # the node's own bot processes (with bot_queue "pool")
    # Where bot decisions and hints run: "pool", this node's processes; "redis", the queue of
    # bot workers (python -m server.bot_worker) on the deployment's Redis (docs/bots.md).
    bot_queue: str = "pool"
    # From a room's ask to the bot's move, at most: then the node plays a cheaper level's move.
    bot_deadline: float = 0.8
    matchmaker: bool = True  # run the quick-play matchmaker inside this node
    log_level: str = "INFO"
    max_connections: int = 10_000
    # permessage-deflate: off. Its zlib state costs memory per socket and CPU per frame, to
    # shrink small msgpack frames by little (docs/benchmarks.md); uvicorn settles it in the
    # handshake, before the subprotocol is known, so it cannot differ per subprotocol.
    ws_deflate: bool = False
    # WebSocket keepalive pings, seconds apart: their round trip is the clocks' lag credit, and
    # a socket that leaves one unanswered this long is closed (docs/protocol.md).
    ws_ping_interval: float = 20.0
    # Serve sockets with this server's own uvicorn protocols (server/net/fast_path.py); False:
    # uvicorn's stock ones, through which the app works too.
    ws_fast_path: bool = True
    node_ttl: float = 10.0  # a node silent this long is dead: its sockets stop counting
    accounts: AccountPolicy = field(default_factory=AccountPolicy)  # sessions, throttles
    # Web Push (server/push/): the VAPID ``sub`` a push service may write to (mailto: or https:;
    # "" takes PUBLIC_URL when it is https), at most one push per room and player per
    # push_interval seconds, a failed push offered again push_retry, 2x, 4x, ... seconds later.
    push_contact: str = ""
    push_interval: float = 60.0
    push_retry: float = 15.0
    # Tests only: subscriptions may name a push service on a loopback address, over http too.
    push_allow_loopback: bool = False

    @property
    def vapid_contact(self) -> str:
        if self.push_contact:
            return self.push_contact
        if self.public_url.startswith("https://"):
            return self.public_url.rstrip("/")
        return "mailto:hearts@localhost"

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        # Unset: the node signs with a key kept in the store of record (server/accounts/keys.py).
        secret = env.get("HEARTS_SECRET", "").encode()
        host = env.get("HOST", "127.0.0.1")
        port = int(env.get("PORT", "8000"))
        defaults = Clocks()
        clocks = Clocks(
            grace_play=_float("HEARTS_GRACE_PLAY", defaults.grace_play),
            grace_pass=_float("HEARTS_GRACE_PASS", defaults.grace_pass),
            bank=_float("HEARTS_BANK", defaults.bank),
            reconnect=_float("HEARTS_RECONNECT", defaults.reconnect),
            boot_window=_float("HEARTS_BOOT_WINDOW", defaults.boot_window),
            lag_cap=_float("HEARTS_LAG_CAP", defaults.lag_cap),
            bot_think=_float("HEARTS_BOT_THINK", defaults.bot_think),
            between_hands=_float("HEARTS_BETWEEN_HANDS", defaults.between_hands),
        )
        return cls(
            host=host,
            port=port,
            redis_url=choose_redis_url(env.get("REDIS_CLUSTER_URL"), env.get("REDIS_URL")),
            database_url=env.get("HEARTS_DATABASE_URL") or None,
            redis_wait_replicas=int(env.get("HEARTS_REDIS_WAIT_REPLICAS", "0")),
            redis_wait_ms=int(env.get("HEARTS_REDIS_WAIT_MS", "50")),
            secret=secret,
            public_url=env.get("PUBLIC_URL", f"http://{host}:{port}"),
            node_id=env.get("NODE_ID") or cls().node_id,
            clocks=clocks,
            scheduler_interval=_float("HEARTS_SCHEDULER_INTERVAL", 0.05),
            outage_after=_float("HEARTS_OUTAGE_AFTER", 5.0),
            bot_fill_after=_float("HEARTS_BOT_FILL_AFTER", 20.0),
            bot_workers=int(env.get("HEARTS_BOT_WORKERS", "1")),
            bot_queue=bot_queue(env.get("HEARTS_BOT_QUEUE")),
            bot_deadline=_float("HEARTS_BOT_DEADLINE", 0.8),
            matchmaker=env.get("HEARTS_MATCHMAKER", "1") not in ("0", "false", "no"),
            log_level=env.get("LOG_LEVEL", "INFO"),
            max_connections=int(env.get("HEARTS_MAX_CONNECTIONS", "10000")),
            node_ttl=_float("HEARTS_NODE_TTL", 10.0),
            ws_deflate=env.get("HEARTS_WS_DEFLATE", "0") in ("1", "true", "yes"),
            ws_ping_interval=_float("HEARTS_WS_PING_INTERVAL", 20.0),
            ws_fast_path=env.get("HEARTS_WS_FAST_PATH", "1") not in ("0", "false", "no"),
            accounts=AccountPolicy.from_env(env),
            push_contact=env.get("HEARTS_PUSH_CONTACT", ""),
            push_interval=_float("HEARTS_PUSH_INTERVAL", 60.0),
            push_retry=_float("HEARTS_PUSH_RETRY", 15.0),
            push_allow_loopback=env.get("HEARTS_PUSH_ALLOW_LOOPBACK", "0") in ("1", "true"),
        )
