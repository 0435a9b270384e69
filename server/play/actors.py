"""Room actors: this node's decoded copy of each room it serves, one command at a time.

lichess holds each game in one in-memory actor that persists every move; this is the same shape
over Redis. An actor keeps the room's decoded ``RoomState``, its stored bytes and its version,
so a command costs one rules step and one compare-and-set, not a load and a replay. Commands to
one room run one at a time on this node (the actor's lock), so a node never conflicts with
itself. The store stays the only truth: an actor that is evicted, or whose node dies, loses
nothing, and one that learns of a newer commit (another node's, through fan-out) reloads before
its next use.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field

from server.core.room.state import RoomState

DEFAULT_LIMIT = 20_000  # rooms kept decoded on one node; each is a few KB


@dataclass(slots=True)
class Actor:
    room_id: str
    state: RoomState | None = None  # None: not loaded, or dropped because it may be stale
    data: bytes = b""  # the state as stored, to tell a step that changed nothing
    version: int = 0
    newest_seen: int = 0  # the highest event seq fan-out has shown for the room
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def fresh(self) -> bool:
        """Loaded, and no commit newer than it is known."""
        return self.state is not None and self.newest_seen <= self.state.seq

    def keep(self, state: RoomState, data: bytes, version: int) -> None:
        self.state, self.data, self.version = state, data, version

    def drop(self) -> None:
        self.state, self.data, self.version = None, b"", 0


class Actors:
    """The node's actors, at most ``limit`` of them, least recently used evicted first."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._actors: OrderedDict[str, Actor] = OrderedDict()

    def __len__(self) -> int:
        return len(self._actors)

    def get(self, room_id: str) -> Actor:
        actor = self._actors.get(room_id)
        if actor is None:
            actor = self._actors[room_id] = Actor(room_id)
            self._evict()
        else:
            self._actors.move_to_end(room_id)
        return actor

    def peek(self, room_id: str) -> Actor | None:
        return self._actors.get(room_id)

    def saw(self, room_id: str, seq: int) -> None:
        """Fan-out delivered event ``seq``: if it is newer than the actor's state, it is stale."""
        actor = self._actors.get(room_id)
        if actor is not None and seq > actor.newest_seen:
            actor.newest_seen = seq

    def forget(self, room_id: str) -> None:
        """No socket here watches the room any more: free its memory (unless it is busy)."""
        actor = self._actors.get(room_id)
        if actor is not None and not actor.lock.locked():
            del self._actors[room_id]

    def _evict(self) -> None:
        excess = len(self._actors) - self.limit
        if excess <= 0:
            return
        for room_id in list(self._actors)[: excess + 16]:
            if excess <= 0:
                break
            if not self._actors[room_id].lock.locked():
                del self._actors[room_id]
                excess -= 1
