"""Where the Redis room store keeps things: key names and the deadline shards.

Rooms are spread over ``SHARDS`` fixed shards, each under its own hash tag ``{sN}``; a room's
shard is a stable hash of its id (CRC-32, the same on every node and every Python). All keys of
a room *and* its shard's deadline set carry the shard's tag, so the commit script, which writes
the room's state, log, archive, deadline and publishes its events, touches one hash slot, as a
Redis Cluster requires. 64 shards spread over up to 64 cluster primaries; a cluster with more
primaries than that would leave some without rooms.
"""

from __future__ import annotations

import functools
import zlib
from typing import NamedTuple

SHARDS = 64
KEYS_CACHED = 65536  # rooms whose commit keys a store keeps made (a node serves fewer)


def shard_of(room_id: str) -> int:
    return zlib.crc32(room_id.encode()) % SHARDS


class CommitKeys(NamedTuple):
    """What every commit of one room names: its shard, its keys and its channel."""

    shard: int
    state: str
    log: str
    deadlines: str
    no_archive: str  # the archive key of a commit that archives nothing (never written)
    nodes: str
    channel: str


class RoomKeys:
    """Key names under one prefix (``hearts`` by default)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        # Made once per room, not on every card: the names are a CRC and five formats.
        self.commit_keys = functools.lru_cache(maxsize=KEYS_CACHED)(self._commit_keys)
        self.nodes = f"{prefix}:{{nodes}}:"  # node presence keys: the reap script's one slot
        self.heartbeat = f"{prefix}:heartbeat"  # single-key operations only
        self.outage = f"{prefix}:outage"

    def tag(self, shard: int) -> str:
        return f"{self.prefix}:{{s{shard}}}"

    def deadlines(self, shard: int) -> str:
        return f"{self.tag(shard)}:deadlines"

    def room(self, room_id: str, part: str) -> str:
        return f"{self.tag(shard_of(room_id))}:room:{room_id}:{part}"

    def channel(self, room_id: str) -> str:
        """The sharded pub/sub channel of the room's commits (in its slot)."""
        return self.room(room_id, "events")

    def _commit_keys(self, room_id: str) -> CommitKeys:
        shard = shard_of(room_id)
        return CommitKeys(
            shard,
            self.room(room_id, "state"),
            self.room(room_id, "log"),
            self.deadlines(shard),
            self.room(room_id, "archive:-"),
            self.room(room_id, "nodes"),
            self.channel(room_id),
        )

    def seated(self, player: str) -> str:
        """The set of rooms that seat the player (``RoomStore.index_seats``)."""
        return f"{self.prefix}:seated:{player}"

    def lease(self, name: str) -> str:
        return f"{self.prefix}:lease:{name}"
