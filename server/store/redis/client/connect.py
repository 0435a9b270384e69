"""Connecting to Redis: one server, or a Redis Cluster; and the stores' shared error mapping.

A URL chooses the client:

- ``redis://``, ``rediss://``, ``unix://``: one Redis server (``redis.asyncio.Redis``).
- ``redis+cluster://host:port`` (or ``rediss+cluster://``): a Redis Cluster, reached through any
  of its nodes (``redis.asyncio.cluster.RedisCluster``, which learns the slot map, follows MOVED
  replies and finds the new primary after a failover). Several seed nodes may be given,
  comma-separated: ``redis+cluster://a:6379,b:6379``.

``REDIS_CLUSTER_URL`` in the environment is the same as ``REDIS_URL`` with the cluster scheme
(see ``server.config``). Both stores issue the same commands on either client: their multi-key
scripts and transactions touch one hash slot each (see the key layouts of ``redis.rooms`` and
``redis.league``).
"""

from __future__ import annotations

import asyncio
from importlib import resources
from types import TracebackType
from typing import Any, Literal

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, SlotNotCoveredError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.ops import metrics
from server.store.redis.client.packing import use_hiredis_packing
from server.store.rooms import StoreError, StoreUnavailable

SINGLE_SCHEMES = ("redis://", "rediss://", "unix://")
CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")
REDIS_SCHEMES = SINGLE_SCHEMES + CLUSTER_SCHEMES

Client = aioredis.Redis | RedisCluster

# Redis answers a command in well under a millisecond. A reply this late means a server that
# stopped answering without closing its connections (frozen, partitioned, swapping): the call
# fails with StoreUnavailable then, not after the kernel's TCP timeouts (minutes), so a player's
# move gets an answer and the node's loops go on. Applies to redis-py's connections and the
# lanes alike; ``?socket_timeout=SECONDS`` in the URL sets another (``reply_timeout``).
REPLY_TIMEOUT = 2.0


def is_cluster_url(url: str) -> bool:
    return url.startswith(CLUSTER_SCHEMES)


def cluster_url(url: str) -> str:
    """``url`` with the cluster scheme (for ``REDIS_CLUSTER_URL=redis://…``)."""
    if is_cluster_url(url):
        return url
    for scheme in ("redis://", "rediss://"):
        if url.startswith(scheme):
            return scheme.replace("://", "+cluster://") + url[len(scheme) :]
    raise ValueError(f"a Redis Cluster URL must start with redis:// or rediss://, got {url!r}")


class _Cluster(RedisCluster):
    """RedisCluster that learns the slot map before its first command.

    redis-py 8.1 resolves a command's routing policy before it initializes, on the seed
    node's connections; many first commands at once (a node starting under load) then race
    the initialization, which closes those connections mid-handshake (seen as
    ``'NoneType' object has no attribute 'writelines'``). Initializing first avoids it.
    """

    _first_map_read = False

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        # Only the first time: a re-initialization after a failed node is redis-py's own,
        # which also replaces a dead default node (initializing here would ask the dead one).
        if not self._first_map_read:
            await self._first_initialize()
        return await super().execute_command(*args, **kwargs)

    async def _first_initialize(self) -> None:
        # A client born during a failover may be told the dead primary still owns its slots
        # (and pick it as the node it asks for COMMAND): retry as long as a command would.
        for attempt in range(8):
            try:
                await self.initialize()
                break
            except (RedisConnectionError, RedisTimeoutError, OSError):
                if attempt == 7:
                    raise
                await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
        self._first_map_read = True


def connect(url: str) -> Client:
    """A lazily connecting client for ``url``; bytes in and out (states and events are opaque)."""
    if not is_cluster_url(url):
        single = aioredis.Redis.from_url(
            url,
            decode_responses=False,
            socket_timeout=REPLY_TIMEOUT,
            socket_connect_timeout=REPLY_TIMEOUT,
            # A refused or dropped connection (a restarting Redis) is retried, about 5 s in all;
            # a timeout is not: the server answers nothing, and asking again would only double
            # the caller's wait.
            retry=Retry(
                ExponentialWithJitterBackoff(base=0.01, cap=1.0),
                retries=10,
                supported_errors=(RedisConnectionError,),
            ),
        )
        use_hiredis_packing(single)
        return single
    scheme, rest = url.split("://", 1)
    plain = scheme.replace("+cluster", "")
    hosts, _, tail = rest.partition("/")
    credentials, _, hosts = hosts.rpartition("@")
    auth = f"{credentials}@" if credentials else ""
    seeds = [h for h in hosts.split(",") if h]
    if not seeds:
        raise ValueError(f"no cluster node in {url!r}")
    first = f"{plain}://{auth}{seeds[0]}/{tail}" if tail else f"{plain}://{auth}{seeds[0]}"
    startup = []
    for seed in seeds[1:]:
        host, _, port = seed.rpartition(":")
        startup.append(ClusterNode(host, int(port)))
    cluster = _Cluster.from_url(
        first,
        decode_responses=False,
        startup_nodes=startup or None,
        socket_timeout=REPLY_TIMEOUT,
        socket_connect_timeout=REPLY_TIMEOUT,
        # A failover takes about cluster-node-timeout plus an election: keep retrying about
        # that long (exponential backoff, 8 attempts, ~5 s) rather than failing the caller
        # after the first refused connection. Here a timeout is retried too (redis-py's
        # cluster client retries both): a primary that stopped answering is about to be
        # failed over, and the retries reach its replica.
        retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries=8),
    )
    use_hiredis_packing(cluster)
    return cluster


def reply_timeout(client: Client) -> float:
    """How long a call waits for Redis's reply: the ``socket_timeout`` redis-py made
    ``client``'s connections with (from its URL)."""
    if isinstance(client, RedisCluster):
        settings = client.nodes_manager.connection_kwargs
    else:
        settings = client.connection_pool.connection_kwargs
    value = settings.get("socket_timeout")
    return float(value) if value else REPLY_TIMEOUT


def load_script(name: str) -> str:
    return (resources.files("server.store.redis") / "lua" / name).read_text(encoding="utf-8")


class _StoreErrors:
    """The context of one call to Redis: see ``store_errors``. A class, not a generator
    (``contextlib.contextmanager``): every card's commit enters one, and a generator's context
    costs a generator and a wrapper object each time."""

    __slots__ = ()

    def __enter__(self) -> None:
        metrics.STORE_CALLS.inc()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Literal[False]:
        # SlotNotCoveredError is not a RedisError: a cluster mid-failover, whose slot map gives
        # a slot no owner yet.
        if isinstance(exc, (RedisConnectionError, RedisTimeoutError, OSError, SlotNotCoveredError)):
            raise StoreUnavailable(str(exc)) from exc
        if isinstance(exc, RedisError):
            raise StoreError(str(exc)) from exc
        return False


_STORE_ERRORS = _StoreErrors()


def store_errors() -> _StoreErrors:
    """Map redis-py errors to the store's own, so callers never import redis.

    Each use is one call to Redis (a command, a script or a pipeline: one round trip, but for
    ``events_since``, which may take two), counted for the cost-per-card figures.
    """
    return _STORE_ERRORS


def as_bytes(value: object) -> bytes:
    """A reply from a client made with ``decode_responses=False`` (redis-py types it loosely)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise StoreError(f"unexpected reply from Redis: {type(value).__name__}")


def as_text(value: object) -> str:
    return value if isinstance(value, str) else as_bytes(value).decode()


def stream_entries(value: object) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """An XRANGE/XREVRANGE reply as (entry id, fields) pairs of bytes."""
    if not isinstance(value, list):
        raise StoreError(f"unexpected reply from Redis: {type(value).__name__}")
    return [
        (as_bytes(entry_id), {as_bytes(k): as_bytes(v) for k, v in fields.items()})
        for entry_id, fields in value
    ]
