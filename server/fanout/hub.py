"""Fan-out: one store subscription per node, forwarding each room's events to its local sockets."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from server.accounts.identity import Identity
from server.core.room.commands import Event
from server.fanout.commit_frames import CommitFrames
from server.ops import metrics
from server.play.actors import Actors
from server.play.rooms import decode_event
from server.store import RoomStore, StoreError, Subscriber

log = logging.getLogger(__name__)

RESYNC_AGAIN = 1.0  # seconds between the two catch-ups after a commit's unknown outcome


class Watcher(Protocol):
    """A socket watching a room (``server.net.connection.Connection``), as fan-out and presence
    see it."""

    id: str
    seat: int | None
    identity: Identity | None
    last_seq: int  # the newest event this socket has (from its view, or delivered)

    @property
    def entering(self) -> bool:
        """Still getting its view: it has no starting point yet (``Connection.hold``)."""
        ...

    def deliver(self, out: CommitFrames) -> None: ...


class Hub:
    def __init__(self, store: RoomStore, node_id: str, actors: Actors) -> None:
        self.store = store
        self.node_id = node_id
        self.actors = actors
        self.watchers: dict[str, set[Watcher]] = defaultdict(set)
        # Per watched room, the newest seq handed to its sockets (absent: not known yet).
        self._delivered: dict[str, int] = {}
        # Per room being caught up from the store: what waits behind it, as (first seq, events).
        self._waiting: dict[str, list[tuple[int, Sequence[Event]]]] = {}
        self._catch_ups: dict[str, asyncio.Task[None]] = {}
        self._resyncs: dict[str, asyncio.Task[None]] = {}  # rooms after an unknown outcome
        self._sub: Subscriber | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        self._sub = self.store.subscriber()
        self._task = asyncio.create_task(self._pump(), name="hub")

    async def stop(self) -> None:
        for resync in list(self._resyncs.values()):
            resync.cancel()
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
                self._waiting.pop(room, None)
                task = self._catch_ups.pop(room, None)
                if task is not None:
                    task.cancel()
                self.actors.forget(room)
                metrics.ROOMS_WATCHED.set(len(self.watchers))
                assert self._sub is not None
                try:
                    # Both may fail safely: a lost subscription is not renewed, and a room
                    # still tracked for this node only has the others publish to it (and the
                    # reaper visit it) for nothing.
                    await self._sub.remove(room)
                    await self.store.untrack_room(self.node_id, room)
                except StoreError as e:
                    log.warning("unwatching room %s: the store is unreachable: %s", room, e)

    def committed(self, room: str, first_seq: int, events: list[Event]) -> None:
        """This node committed ``events`` as ``first_seq``…: hand them to the room's sockets now.

        The store publishes a commit only to other nodes that watch the room (``RoomStore``'s
        fan-out contract), so a node's own events reach its sockets from here. They follow the
        last seq those sockets were given, unless an earlier event from another node is still
        on its way: then the room is caught up from the store first (``_catch_up``).
        """
        conns = self.watchers.get(room)
        if not conns or not events:
            return
        self._arrived(room, conns, first_seq, events)

    def outcome_unknown(self, room: str) -> None:
        """A commit here to ``room`` got no answer: it may be applied yet (a stalled server
        runs what it had read), and then no event of it reaches the sockets, not even the next
        seat's prompt, until some later commit shows the gap. So the room is caught up from the
        store once it answers, and again ``RESYNC_AGAIN`` seconds later: the store may run the
        stalled call after that first read (two connections, in no set order)."""
        if room in self.watchers and room not in self._resyncs:
            self._resyncs[room] = asyncio.get_running_loop().create_task(
                self._resync(room), name=f"fan-out resync {room}"
            )

    async def _resync(self, room: str) -> None:
        try:
            for pause in (0.0, RESYNC_AGAIN):
                await asyncio.sleep(pause)
                if not self.watchers.get(room):
                    return
                running = self._catch_ups.get(room)
                if running is None:
                    self._catch_up(room, [])
                    running = self._catch_ups[room]
                await asyncio.wait({running})  # shared: waiting on it cancels nothing of it
        finally:
            self._resyncs.pop(room, None)

    def _arrived(
        self, room: str, conns: set[Watcher], first_seq: int, events: Sequence[Event]
    ) -> None:
        """Events ``first_seq``… of a watched room, from a commit here or from fan-out."""
        waiting = self._waiting.get(room)
        if waiting is not None:
            waiting.append((first_seq, events))  # in order, behind the catch-up
            return
        delivered = self._delivered.get(room)
        if delivered is None and not any(_started(c) for c in conns):
            # Nobody here has a starting point yet: each socket's view, taken after this, holds
            # whatever came before, so delivery starts here.
            delivered = self._delivered[room] = first_seq - 1
        if delivered is not None and first_seq <= delivered + 1:
            self._deliver_next(room, conns, first_seq, events)  # in order, or seen already
        else:
            self._catch_up(room, [(first_seq, events)])  # a gap: fetch it before these

    def _catch_up(self, room: str, waiting: list[tuple[int, Sequence[Event]]]) -> None:
        self._waiting[room] = waiting
        self._catch_ups[room] = asyncio.get_running_loop().create_task(
            self._fill(room), name=f"fan-out catch-up {room}"
        )

    async def _fill(self, room: str) -> None:
        """Deliver what the room's sockets miss from the store, then what waited meanwhile."""
        backoff = 0.05
        try:
            while True:
                conns = self.watchers.get(room)
                if not conns:
                    return
                since = self._delivered.get(room)
                if since is None:
                    waiting = self._waiting.get(room) or [(1, ())]
                    since = min(
                        (c.last_seq for c in conns if _started(c)), default=waiting[0][0] - 1
                    )
                try:
                    stored = await self.store.events_since(room, since)
                    break
                except StoreError as e:
                    log.warning("fan-out: catching up room %s failed: %s", room, e)
                    await asyncio.sleep(backoff)
                    backoff = min(2 * backoff, 2.0)
            if stored is None:
                log.warning("fan-out: events of room %s after %d are gone", room, since)
                stored = []
            self._delivered[room] = since
            for event in stored:
                self._deliver_next(room, conns, event.seq, (decode_event(event.data),))
            for first_seq, events in self._waiting.get(room, ()):
                self._deliver_next(room, conns, first_seq, events)
        finally:
            if self._catch_ups.get(room) is asyncio.current_task():
                del self._catch_ups[room]
                self._waiting.pop(room, None)

    def _deliver_next(
        self, room: str, conns: set[Watcher], first_seq: int, events: Sequence[Event]
    ) -> None:
        """Deliver the part of ``events`` after what the room's sockets were given."""
        delivered = self._delivered.get(room, 0)
        skip = max(0, delivered + 1 - first_seq)
        if skip < len(events):
            self._delivered[room] = first_seq + len(events) - 1
            _fan_out(conns, room, first_seq + skip, events[skip:])

    async def _pump(self) -> None:
        assert self._sub is not None
        while True:
            try:
                async for room, stored in self._sub:
                    self.actors.saw(room, stored.seq)
                    conns = self.watchers.get(room)
                    if conns:
                        self._arrived(room, conns, stored.seq, (decode_event(stored.data),))
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                # A lost subscription connection: clients notice no gap because they resume
                # by seq; log it and keep pumping.
                log.exception("event fan-out failed; resubscribing")
                await asyncio.sleep(0.5)


def _started(conn: Watcher) -> bool:
    """The socket has a view of the room (a socket whose entering failed has none: seq 0)."""
    return not conn.entering and conn.last_seq > 0


def _fan_out(conns: set[Watcher], room: str, first_seq: int, events: Sequence[Event]) -> None:
    out = CommitFrames(room, first_seq, events)  # each event encoded once per codec and seat
    for conn in conns:
        conn.deliver(out)
