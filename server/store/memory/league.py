"""The in-process league store: the embedded single-node default, with Redis's semantics.

Every method does its reads and writes without awaiting in between, so under asyncio each call
is atomic exactly like a Lua script in Redis.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence

from matchmaker.matching import QueueEntry
from server.store.league import (
    DEFAULT_ASSIGNMENT_TTL,
    LeagueStore,
    Seating,
    check_entry,
    check_seatings,
    decode_entry,
    encode_entry,
)
from server.store.memory.journal import SessionJournal
from server.store.memory.sessions import MemorySessions
from server.store.sessions import check_finite


class MemoryLeagueStore(MemorySessions, LeagueStore):
    def __init__(
        self,
        *,
        assignment_ttl: float = DEFAULT_ASSIGNMENT_TTL,
        journal: SessionJournal | None = None,
    ) -> None:
        """``journal``: where sessions are written through (``server.store.memory.journal``)."""
        if assignment_ttl <= 0:
            raise ValueError("the assignment ttl must be positive")
        self.assignment_ttl = assignment_ttl
        self._queue: dict[str, str] = {}  # player id -> encoded entry
        self._queue_names: dict[str, str] = {}
        self._queue_seen: dict[str, float] = {}
        # Expiry on the local monotonic clock: assignments never leave this process.
        self._assignments: dict[str, tuple[str, float]] = {}
        self._pending: dict[str, float | None] = {}  # room -> time noted; None: abandoning
        self._init_sessions(journal)

    # The quick-play queue ---------------------------------------------------------------------

    def _assignment(self, player_id: str) -> str | None:
        held = self._assignments.get(player_id)
        if held is None:
            return None
        if held[1] <= time.monotonic():
            del self._assignments[player_id]
            return None
        return held[0]

    async def enqueue(self, entry: QueueEntry, name: str, *, now: float | None = None) -> bool:
        check_entry(entry)
        seen = entry.joined_at if now is None else now
        check_finite(seen)
        if self._assignment(entry.player_id) is not None:
            return False
        self._queue[entry.player_id] = encode_entry(entry)
        self._queue_names[entry.player_id] = name
        self._queue_seen[entry.player_id] = seen
        return True

    def _unqueue(self, player_id: str) -> bool:
        self._queue_names.pop(player_id, None)
        self._queue_seen.pop(player_id, None)
        return self._queue.pop(player_id, None) is not None

    async def dequeue(self, player_id: str) -> bool:
        return self._unqueue(player_id)

    async def touch_queue(self, player_ids: Iterable[str], now: float) -> int:
        check_finite(now)
        touched = 0
        for pid in set(player_ids):
            if pid in self._queue:
                self._queue_seen[pid] = now
                touched += 1
        return touched

    async def purge_queue(self, before: float) -> list[str]:
        gone = sorted(pid for pid, seen in self._queue_seen.items() if seen <= before)
        for pid in gone:
            self._unqueue(pid)
        return gone

    async def queued(self, player_id: str) -> QueueEntry | None:
        encoded = self._queue.get(player_id)
        return None if encoded is None else decode_entry(player_id, encoded)

    async def queue_entries(self, target: int | None = None) -> list[QueueEntry]:
        entries = [decode_entry(pid, enc) for pid, enc in self._queue.items()]
        if target is not None:
            entries = [e for e in entries if e.target == target]
        return sorted(entries, key=lambda e: (e.joined_at, e.player_id))

    async def queue_names(self, player_ids: Iterable[str]) -> dict[str, str]:
        return {pid: self._queue_names[pid] for pid in player_ids if pid in self._queue_names}

    async def seat_tables(
        self,
        assignments: Sequence[Seating],
        *,
        expected: Mapping[str, QueueEntry] | None = None,
    ) -> list[bool]:
        check_seatings(assignments)
        wanted = {pid: encode_entry(e) for pid, e in (expected or {}).items()}
        until = time.monotonic() + self.assignment_ttl
        seated: list[bool] = []
        for room_id, players in assignments:
            abandoning = room_id in self._pending and self._pending[room_id] is None
            ok = not abandoning and all(
                pid in self._queue and (pid not in wanted or self._queue[pid] == wanted[pid])
                for pid in players
            )
            if ok:
                for pid in players:
                    self._unqueue(pid)
                    self._assignments[pid] = (room_id, until)
                self._pending.pop(room_id, None)
            seated.append(ok)
        return seated

    def _take(self, player_id: str) -> str | None:
        room = self._assignment(player_id)
        self._assignments.pop(player_id, None)
        return room

    async def take_assignment(self, player_id: str) -> str | None:
        return self._take(player_id)

    async def take_assignments(self, player_ids: Iterable[str]) -> dict[str, str]:
        taken = {pid: self._take(pid) for pid in player_ids}
        return {pid: room for pid, room in taken.items() if room is not None}

    # Pending tables ----------------------------------------------------------------------------

    async def note_table(self, room_id: str, at: float) -> None:
        check_finite(at)
        self._pending[room_id] = at

    async def forget_table(self, room_id: str) -> None:
        self._pending.pop(room_id, None)

    async def take_stale_tables(self, before: float) -> list[str]:
        check_finite(before)
        for room, at in self._pending.items():
            if at is not None and at <= before:
                self._pending[room] = None
        return sorted(room for room, at in self._pending.items() if at is None)

    async def close(self) -> None:
        self._session_journal.close()
