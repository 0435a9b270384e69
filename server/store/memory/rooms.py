"""The in-process room store: the embedded single-node default, with Redis's semantics.

Every method does its reads and writes without awaiting in between, so under asyncio each call
is atomic exactly like a Lua script in Redis. Alone it keeps nothing past the process (tests,
``memory://``); given a journal (``server.store.memory.journal``, kept by
``server.store.sqlite``) it writes each change through, in the same call and before changing
memory, and starts from what the journal holds, so the embedded node's rooms outlive it.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from bisect import bisect_right
from collections.abc import Sequence

from server.store.memory.journal import RoomJournal, RoomRecord
from server.store.rooms import (
    DEFAULT_MAX_LOG,
    Archive,
    EventOrderError,
    RoomStore,
    Snapshot,
    StoredEvent,
    Subscriber,
    check_deadline,
    check_events,
    check_max_log,
    next_watched,
)


class MemorySubscriber(Subscriber):
    """Receives a room's events from the store's commit, through an asyncio queue."""

    def __init__(self, store: MemoryRoomStore) -> None:
        self._store = store
        self._rooms: set[str] = set()
        self._queue: asyncio.Queue[tuple[str, StoredEvent] | None] = asyncio.Queue()
        self._closed = False

    async def add(self, room_id: str) -> None:
        if self._closed:
            raise RuntimeError("subscriber is closed")
        self._rooms.add(room_id)
        self._store._subscribers.setdefault(room_id, set()).add(self)

    async def remove(self, room_id: str) -> None:
        self._rooms.discard(room_id)
        self._store._unsubscribe(room_id, self)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for room_id in list(self._rooms):
            self._store._unsubscribe(room_id, self)
        self._rooms.clear()
        self._store._open_subscribers.discard(self)
        self._queue.put_nowait(None)

    def _deliver(self, room_id: str, events: Sequence[StoredEvent]) -> None:
        for event in events:
            self._queue.put_nowait((room_id, event))

    async def __anext__(self) -> tuple[str, StoredEvent]:
        return await next_watched(self._queue, self._rooms)


class MemoryRoomStore(RoomStore):
    """Rooms in dicts, deadlines in a lazily cleaned heap, fan-out through asyncio queues;
    each change written through ``journal`` first (the default keeps nothing)."""

    def __init__(
        self, *, max_log: int = DEFAULT_MAX_LOG, journal: RoomJournal | None = None
    ) -> None:
        self.max_log = check_max_log(max_log)
        self._journal = journal if journal is not None else RoomJournal()
        restored = self._journal.restore()
        self._rooms: dict[str, RoomRecord] = restored.rooms
        self._deadlines: dict[str, float] = restored.deadlines
        # (deadline, room_id) entries; an entry whose deadline no longer matches
        # self._deadlines is stale and skipped, which keeps set/clear O(log n).
        self._heap: list[tuple[float, str]] = []
        self._rebuild_heap()
        self._subscribers: dict[str, set[MemorySubscriber]] = {}
        self._open_subscribers: set[MemorySubscriber] = set()
        self._heartbeat: float | None = restored.heartbeat
        self._outage: tuple[float, float] | None = restored.outage
        self._leases: dict[str, tuple[str, float]] = {}
        self._alive: dict[str, float] = {}  # node -> monotonic expiry
        self._node_rooms: dict[str, set[str]] = restored.node_rooms
        self._seated: dict[str, set[str]] = restored.seated  # player -> rooms
        self._next_sweep = 0.0
        self._closed = False

    async def now(self) -> float:
        return time.time()

    async def create_room(
        self,
        room_id: str,
        state: bytes,
        events: Sequence[StoredEvent],
        deadline: float | None,
    ) -> bool:
        check_events(events)
        check_deadline(deadline)
        if self._room(room_id) is not None:
            return False
        room = RoomRecord(version=1, state=state)
        trimmed = self._trimmed_through(room, events)
        self._journal.put_room(
            room_id,
            version=1,
            state=state,
            trimmed_through=trimmed,
            expires=None,
            deadline=deadline,
            events=events,
            archive=None,
        )
        self._rooms[room_id] = room
        self._apply(room_id, room, events, trimmed, deadline)
        return True

    def _room(self, room_id: str) -> RoomRecord | None:
        """The room, unless its time to live ran out (then it is gone, as Redis would have it)."""
        room = self._rooms.get(room_id)
        if room is not None and room.expires is not None and room.expires <= time.time():
            self._forget([room_id])
            return None
        return room

    def _forget(self, room_ids: list[str]) -> None:
        """Rooms deleted or expired: state, log, archives and deadline."""
        self._journal.drop_rooms(room_ids)
        for room_id in room_ids:
            self._rooms.pop(room_id, None)
            self._set_deadline(room_id, None)

    async def load_room(self, room_id: str) -> Snapshot | None:
        room = self._room(room_id)
        return None if room is None else Snapshot(room.version, room.state)

    async def commit(
        self,
        room_id: str,
        expected_version: int,
        state: bytes,
        events: Sequence[StoredEvent],
        deadline: float | None,
        archive: Archive | None = None,
        ttl: float | None = None,
    ) -> bool:
        if expected_version < 1:
            raise ValueError("expected_version must be at least 1; use create_room")
        check_events(events)
        check_deadline(deadline)
        room = self._room(room_id)
        if room is None or room.version != expected_version:
            return False
        if events and events[0].seq <= room.last_seq:
            raise EventOrderError(f"event seq {events[0].seq} is not after {room.last_seq}")
        expires = None if ttl is None else time.time() + ttl
        trimmed = self._trimmed_through(room, events)
        self._journal.put_room(
            room_id,
            version=expected_version + 1,
            state=state,
            trimmed_through=trimmed,
            expires=expires,
            deadline=deadline,
            events=events,
            archive=archive,
        )
        room.version = expected_version + 1
        room.state = state
        if archive is not None and archive.records:
            room.archives.setdefault(archive.name, {}).update(archive.records)
        room.expires = expires
        self._apply(room_id, room, events, trimmed, deadline)
        return True

    async def archived(self, room_id: str, archive: str) -> dict[str, bytes]:
        room = self._room(room_id)
        return dict(room.archives.get(archive, {})) if room is not None else {}

    async def archived_record(self, room_id: str, archive: str, name: str) -> bytes | None:
        room = self._room(room_id)
        return room.archives.get(archive, {}).get(name) if room is not None else None

    def _trimmed_through(self, room: RoomRecord, events: Sequence[StoredEvent]) -> int:
        """The room's trim mark once ``events`` are appended to its log of ``max_log``."""
        excess = len(room.log) + len(events) - self.max_log
        if excess <= 0:
            return room.trimmed_through
        if excess <= len(room.log):
            return room.log[excess - 1].seq
        return events[excess - len(room.log) - 1].seq

    def _apply(
        self,
        room_id: str,
        room: RoomRecord,
        events: Sequence[StoredEvent],
        trimmed: int,
        deadline: float | None,
    ) -> None:
        """The part of a commit after the checks and the journal: log, deadline, publish."""
        if events:
            room.log.extend(events)
            room.last_seq = events[-1].seq
            if trimmed != room.trimmed_through:
                room.trimmed_through = trimmed
                del room.log[: len(room.log) - self.max_log]
        self._set_deadline(room_id, deadline)
        if events:
            for subscriber in self._subscribers.get(room_id, ()):
                subscriber._deliver(room_id, events)

    async def delete_room(self, room_id: str) -> bool:
        existed = room_id in self._rooms
        self._forget([room_id])
        return existed

    async def events_since(self, room_id: str, after_seq: int) -> list[StoredEvent] | None:
        room = self._room(room_id)
        if room is None or after_seq < room.trimmed_through:
            return None
        start = bisect_right(room.log, after_seq, key=lambda event: event.seq)
        return room.log[start:]

    def subscriber(self) -> Subscriber:
        if self._closed:
            raise RuntimeError("store is closed")
        subscriber = MemorySubscriber(self)
        self._open_subscribers.add(subscriber)
        return subscriber

    def _unsubscribe(self, room_id: str, subscriber: MemorySubscriber) -> None:
        watchers = self._subscribers.get(room_id)
        if watchers is not None:
            watchers.discard(subscriber)
            if not watchers:
                del self._subscribers[room_id]

    def _set_deadline(self, room_id: str, deadline: float | None) -> None:
        if deadline is None:
            self._deadlines.pop(room_id, None)
        else:
            self._deadlines[room_id] = deadline
            heapq.heappush(self._heap, (deadline, room_id))
        if len(self._heap) > 2 * len(self._deadlines) + 64:
            self._rebuild_heap()

    def _rebuild_heap(self) -> None:
        self._heap = [(deadline, room_id) for room_id, deadline in self._deadlines.items()]
        heapq.heapify(self._heap)

    def _sweep(self) -> None:
        """Drop expired rooms now and then, as Redis would, so an idle embedded node stays small."""
        at = time.time()
        if at < self._next_sweep:
            return
        self._next_sweep = at + 60.0
        expired = [r for r, o in self._rooms.items() if o.expires and o.expires <= at]
        if expired:
            self._forget(expired)

    async def claim_due(self, now: float, limit: int, lease: float) -> list[str]:
        self._sweep()
        claimed: list[str] = []
        heap = self._heap
        while heap and len(claimed) < limit and heap[0][0] <= now:
            deadline, room_id = heapq.heappop(heap)
            if self._deadlines.get(room_id) == deadline and room_id not in claimed:
                claimed.append(room_id)
        if claimed:
            try:
                self._journal.set_deadlines(dict.fromkeys(claimed, now + lease))
            except BaseException:
                for room_id in claimed:  # back in the heap, as they were
                    heapq.heappush(heap, (self._deadlines[room_id], room_id))
                raise
        for room_id in claimed:
            self._set_deadline(room_id, now + lease)
        return claimed

    async def next_deadline(self, room_id: str) -> float | None:
        return self._deadlines.get(room_id)

    async def heartbeat(self, now: float) -> float | None:
        self._journal.heartbeat(now)
        previous, self._heartbeat = self._heartbeat, now
        return previous

    async def shift_deadlines(self, delta: float) -> int:
        self._journal.shift_deadlines(delta)
        for room_id in self._deadlines:
            self._deadlines[room_id] += delta
        self._rebuild_heap()
        return len(self._deadlines)

    async def record_outage(self, ended: float, delta: float) -> None:
        self._journal.outage(ended, delta)
        self._outage = (ended, delta)

    async def last_outage(self) -> tuple[float, float] | None:
        return self._outage

    async def acquire_lease(self, name: str, holder: str, ttl: float) -> bool:
        # A lease's expiry never leaves the process, so the local monotonic clock is right here.
        at = time.monotonic()
        current = self._leases.get(name)
        if current is not None and current[0] != holder and current[1] > at:
            return False
        self._leases[name] = (holder, at + ttl)
        return True

    async def release_lease(self, name: str, holder: str) -> bool:
        current = self._leases.get(name)
        if current is None or current[0] != holder or current[1] <= time.monotonic():
            return False
        del self._leases[name]
        return True

    async def node_alive(self, node: str, ttl: float) -> bool:
        at = time.monotonic()
        was = self._alive.get(node, 0.0) > at
        self._alive[node] = at + ttl
        return was

    async def track_room(self, node: str, room_id: str) -> None:
        rooms = self._node_rooms.setdefault(node, set())
        if room_id not in rooms:
            self._journal.track_room(node, room_id)
            rooms.add(room_id)

    async def untrack_room(self, node: str, room_id: str) -> None:
        rooms = self._node_rooms.get(node)
        if rooms is not None and room_id in rooms:
            self._journal.untrack_room(node, room_id)
            rooms.discard(room_id)
            if not rooms:
                del self._node_rooms[node]

    async def reap_nodes(self) -> list[tuple[str, list[str]]]:
        at = time.monotonic()
        dead = [n for n in self._node_rooms if self._alive.get(n, 0.0) <= at]
        if dead:
            self._journal.drop_nodes(dead)
        return [(n, sorted(self._node_rooms.pop(n))) for n in dead]

    async def index_seats(self, room_id: str, seated: Sequence[str], left: Sequence[str]) -> None:
        self._journal.index_seats(room_id, seated, left)
        for player in seated:
            self._seated.setdefault(player, set()).add(room_id)
        for player in left:
            rooms = self._seated.get(player)
            if rooms is not None:
                rooms.discard(room_id)
                if not rooms:
                    del self._seated[player]

    async def seated_rooms(self, player_id: str) -> list[str]:
        return sorted(self._seated.get(player_id, ()))

    async def ping(self) -> bool:
        return not self._closed

    async def close(self) -> None:
        if not self._closed:
            self._journal.close()
        self._closed = True
        for subscriber in list(self._open_subscribers):
            await subscriber.close()
