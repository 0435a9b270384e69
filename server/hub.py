"""Fan-out: one store subscription per node, forwarding each room's events to its local sockets."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from server import metrics
from server.actors import Actors
from server.identity import Identity
from server.room.machine import Event
from server.rooms import decode_event
from server.store import RoomStore, Subscriber

log = logging.getLogger(__name__)


class Watcher(Protocol):
    """A socket watching a room (``server.connection.Connection``), as fan-out and presence
    see it."""

    id: str
    seat: int | None
    identity: Identity | None

    def deliver(
        self,
        room: str,
        first_seq: int,
        events: Sequence[Event],
        frames: Sequence[dict[str, bytes | str]],
    ) -> None: ...


class Hub:
    def __init__(self, store: RoomStore, node_id: str, actors: Actors) -> None:
        self.store = store
        self.node_id = node_id
        self.actors = actors
        self.watchers: dict[str, set[Watcher]] = defaultdict(set)
        # Per watched room, the newest seq handed to its sockets (absent: not known yet).
        self._delivered: dict[str, int] = {}
        self._sub: Subscriber | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        self._sub = self.store.subscriber()
        self._task = asyncio.create_task(self._pump(), name="hub")

    async def stop(self) -> None:
        if self._sub is not None:
            await self._sub.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def watch(self, conn: Watcher, room: str) -> None:
        async with self._lock:
            first = not self.watchers.get(room)
            self.watchers[room].add(conn)
            if first:
                assert self._sub is not None
                await self._sub.add(room)
                await self.store.track_room(self.node_id, room)
                metrics.ROOMS_WATCHED.set(len(self.watchers))

    async def unwatch(self, conn: Watcher, room: str) -> None:
        async with self._lock:
            conns = self.watchers.get(room)
            if conns is None:
                return
            conns.discard(conn)
            if not conns:
                del self.watchers[room]
                self._delivered.pop(room, None)
                assert self._sub is not None
                await self._sub.remove(room)
                await self.store.untrack_room(self.node_id, room)
                self.actors.forget(room)
                metrics.ROOMS_WATCHED.set(len(self.watchers))

    def committed(self, room: str, first_seq: int, events: list[Event]) -> None:
        """This node committed ``events`` as ``first_seq``…: hand them to the room's sockets now.

        The store's fan-out brings them back a round trip later, and every other node gets
        them from there. Handed over here only when they follow the last seq the sockets were
        given, so no socket skips an earlier event still on its way from another node; the
        fan-out then passes over them.
        """
        conns = self.watchers.get(room)
        if not conns or not events or self._delivered.get(room) != first_seq - 1:
            return
        self._delivered[room] = first_seq + len(events) - 1
        _fan_out(conns, room, first_seq, events)

    async def _pump(self) -> None:
        assert self._sub is not None
        while True:
            try:
                async for room, stored in self._sub:
                    self.actors.saw(room, stored.seq)
                    conns = self.watchers.get(room)
                    if not conns or stored.seq <= self._delivered.get(room, 0):
                        continue  # nobody here watches, or this node's own, handed over already
                    self._delivered[room] = stored.seq
                    _fan_out(conns, room, stored.seq, (decode_event(stored.data),))
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                # A lost subscription connection: clients notice no gap because they resume
                # by seq; log it and keep pumping.
                log.exception("event fan-out failed; resubscribing")
                await asyncio.sleep(0.5)


def _fan_out(conns: set[Watcher], room: str, first_seq: int, events: Sequence[Event]) -> None:
    frames: list[dict[str, bytes | str]] = [{} for _ in events]  # each encoded once per codec
    for conn in conns:
        conn.deliver(room, first_seq, events, frames)
