"""Room stores: where rooms, their event logs and their deadlines live between steps.

``open_store(url)`` picks the backend: no URL means the in-process memory store (one node,
nothing else installed), journaled in a SQLite file of ``data_dir`` when one is given (the
embedded node's, so its rooms outlive it: ``server.store.sqlite``) and keeping nothing past the
process otherwise (tests, ``memory://``); a ``redis://``, ``rediss://`` or ``unix://`` URL means
one Redis, and a ``redis+cluster://`` URL a Redis Cluster (``server.store.redis.client.connect``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from server.store.memory.rooms import MemoryRoomStore
from server.store.rooms import (
    DEFAULT_MAX_LOG,
    Archive,
    RoomStore,
    Snapshot,
    StoredEvent,
    StoreError,
    StoreUnavailable,
    Subscriber,
)

if TYPE_CHECKING:
    from server.store.league import LeagueStore

__all__ = [
    "DEFAULT_MAX_LOG",
    "Archive",
    "MemoryRoomStore",
    "RoomStore",
    "Snapshot",
    "StoreError",
    "StoreUnavailable",
    "StoredEvent",
    "Subscriber",
    "open_league_store",
    "open_store",
]

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")


def open_store(
    url: str | None,
    *,
    prefix: str = "hearts",
    max_log: int = DEFAULT_MAX_LOG,
    wait_replicas: int = 0,
    wait_ms: int = 50,
    node: str | None = None,
    data_dir: Path | None = None,
) -> RoomStore:
    """The store for ``url``: None or "" → memory, journaled in ``data_dir`` if given;
    "memory://" → memory only; a Redis URL → Redis.

    ``wait_replicas``/``wait_ms``/``node``: Redis only, see ``RedisRoomStore``.

    Connecting to Redis is lazy, so this never blocks on it; call ``ping()`` to check
    readiness. The journal is read when the store is made.
    """
    if not url and data_dir is not None:
        from server.store.sqlite import open_room_store

        return open_room_store(data_dir, max_log=max_log)
    if not url or url == "memory://":
        return MemoryRoomStore(max_log=max_log)
    if url.startswith(_REDIS_SCHEMES):
        # Imported here so the embedded mode never loads redis-py.
        from server.store.redis.rooms import RedisRoomStore

        return RedisRoomStore(
            url,
            prefix=prefix,
            max_log=max_log,
            wait_replicas=wait_replicas,
            wait_ms=wait_ms,
            node=node,
        )
    raise ValueError(
        f"unsupported store URL {url!r}: expected redis://…, redis+cluster://… or nothing"
    )


def open_league_store(
    url: str | None, *, prefix: str = "hearts", data_dir: Path | None = None
) -> LeagueStore:
    """The league store for ``url``, chosen like ``open_store``: nothing → memory (its sessions
    journaled in ``data_dir`` if given), Redis URL → Redis (under the same ``prefix`` as the
    room store)."""
    if not url and data_dir is not None:
        from server.store.sqlite import open_league_store as open_journaled

        return open_journaled(data_dir)
    if not url or url == "memory://":
        from server.store.memory.league import MemoryLeagueStore

        return MemoryLeagueStore()
    if url.startswith(
        ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")
    ):
        from server.store.redis.league import RedisLeagueStore

        return RedisLeagueStore(url, prefix=prefix)
    raise ValueError(
        f"unsupported store URL {url!r}: expected redis://…, redis+cluster://… or nothing"
    )
