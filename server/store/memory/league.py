"""The in-process league store: the embedded single-node default, with Redis's semantics.

Every method does its reads and writes without awaiting in between, so under asyncio each call
is atomic exactly like a Lua script in Redis. Records are kept JSON-encoded, as in Redis, so a
record that Redis could not store fails here too and no caller can alias stored data.
"""

from __future__ import annotations

import json
import time
from bisect import bisect_left, insort
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from matchmaker.matching import QueueEntry
from server.core.ratings import Rating, display_rating
from server.store.league import (
    DEFAULT_ASSIGNMENT_TTL,
    DEFAULT_HISTORY_CAP,
    DEFAULT_RECENT_CAP,
    HistoryPoint,
    LadderRow,
    LeagueStore,
    PlayerRating,
    PostResult,
    Seating,
    check_entry,
    check_post,
    check_seatings,
    check_time,
    decode_entry,
    encode_entry,
    history_point,
)
from server.store.memory.accounts import MemoryAccounts
from server.store.memory.journal import SessionJournal


class MemoryLeagueStore(MemoryAccounts, LeagueStore):
    def __init__(
        self,
        *,
        history_cap: int = DEFAULT_HISTORY_CAP,
        recent_cap: int = DEFAULT_RECENT_CAP,
        assignment_ttl: float = DEFAULT_ASSIGNMENT_TTL,
        journal: SessionJournal | None = None,
    ) -> None:
        """``journal``: where sessions are written through (``server.store.memory.journal``)."""
        if history_cap < 1 or recent_cap < 1 or assignment_ttl <= 0:
            raise ValueError("caps and the assignment ttl must be positive")
        self.history_cap = history_cap
        self.recent_cap = recent_cap
        self.assignment_ttl = assignment_ttl
        self._players: dict[str, PlayerRating] = {}
        self._names: dict[str, str] = {}
        self._games: dict[str, str] = {}  # game id -> record JSON
        self._history: dict[str, list[HistoryPoint]] = {}  # newest first
        self._recent: dict[str, list[str]] = {}  # newest first
        # The ladder as (-score, id), ascending: highest score first, ties by id, the same
        # order as the Redis sorted set (which stores -score).
        self._ladder: list[tuple[int, str]] = []
        self._ladder_key: dict[str, tuple[int, str]] = {}
        self._queue: dict[str, str] = {}  # player id -> encoded entry
        self._queue_names: dict[str, str] = {}
        self._queue_seen: dict[str, float] = {}
        # Expiry on the local monotonic clock: assignments never leave this process.
        self._assignments: dict[str, tuple[str, float]] = {}
        self._pending: dict[str, float | None] = {}  # room -> time noted; None: abandoning
        self._init_accounts(journal)

    def _account_created(self, player_id: str) -> None:
        # A claimed guest keeps its games: on the ladder at once if it has played enough.
        if player_id in self._players:
            self._set_ladder(player_id, self._player(player_id).ladder_score)

    # Ratings and games ---------------------------------------------------------------------

    def _player(self, player_id: str) -> PlayerRating:
        stored = self._players.get(player_id)
        name = self._names.get(player_id, "")
        if stored is None:
            return PlayerRating(name=name)
        return PlayerRating(stored.rating, stored.games, name, stored.version)

    async def get_players(self, player_ids: Iterable[str]) -> dict[str, PlayerRating]:
        return {pid: self._player(pid) for pid in player_ids}

    async def set_name(self, player_id: str, name: str) -> None:
        self._names[player_id] = name

    async def post_game(
        self,
        game_id: str,
        record: Mapping[str, Any],
        expected: Mapping[str, int],
        updates: Mapping[str, PlayerRating],
        *,
        at: float,
    ) -> PostResult:
        check_post(game_id, expected, updates)
        check_time(at)
        encoded = json.dumps(record, separators=(",", ":"))  # fails before anything is written
        if game_id in self._games:
            return PostResult.ALREADY_POSTED
        for pid, version in expected.items():
            if self._player(pid).version != version:
                return PostResult.CONFLICT
        self._games[game_id] = encoded
        for pid, update in updates.items():
            self._players[pid] = PlayerRating(
                Rating(update.rating.mu, update.rating.sigma),
                update.games,
                update.name,
                expected[pid] + 1,
            )
            self._names[pid] = update.name
            history = self._history.setdefault(pid, [])
            history.insert(0, history_point(game_id, at, update))
            del history[self.history_cap :]
            recent = self._recent.setdefault(pid, [])
            recent.insert(0, game_id)
            del recent[self.recent_cap :]
            self._set_ladder(pid, update.ladder_score if self.is_account(pid) else None)
        return PostResult.POSTED

    def _set_ladder(self, player_id: str, score: int | None) -> None:
        old = self._ladder_key.pop(player_id, None)
        if old is not None:
            del self._ladder[bisect_left(self._ladder, old)]
        if score is not None:
            key = (-score, player_id)
            self._ladder_key[player_id] = key
            insort(self._ladder, key)

    async def game_record(self, game_id: str) -> dict[str, Any] | None:
        encoded = self._games.get(game_id)
        return None if encoded is None else json.loads(encoded)

    async def history(self, player_id: str, limit: int = 50) -> list[HistoryPoint]:
        return self._history.get(player_id, [])[: max(0, limit)]

    async def recent_games(self, player_id: str, limit: int = 10) -> list[dict[str, Any]]:
        ids = self._recent.get(player_id, [])[: max(0, limit)]
        return [json.loads(self._games[game_id]) for game_id in ids if game_id in self._games]

    # The ladder ------------------------------------------------------------------------------

    def _rows(self, start: int, stop: int) -> list[LadderRow]:
        rows: list[LadderRow] = []
        for pos in range(max(0, start), min(stop, len(self._ladder))):
            neg, pid = self._ladder[pos]
            if rows and rows[-1].conservative == -neg:
                rank = rows[-1].rank
            else:
                # Competition rank: one more than the number of strictly higher scores.
                rank = bisect_left(self._ladder, (neg, "")) + 1
            player = self._player(pid)
            rows.append(
                LadderRow(
                    rank, pid, player.name, display_rating(player.rating), player.games, -neg
                )
            )
        return rows

    async def ladder(self, offset: int = 0, limit: int = 50) -> list[LadderRow]:
        if limit <= 0:
            return []
        return self._rows(offset, offset + limit)

    async def ladder_size(self) -> int:
        return len(self._ladder)

    async def rank_of(self, player_id: str) -> int | None:
        key = self._ladder_key.get(player_id)
        if key is None:
            return None
        return bisect_left(self._ladder, (key[0], "")) + 1

    async def around(self, player_id: str, k: int = 5) -> list[LadderRow]:
        key = self._ladder_key.get(player_id)
        if key is None:
            return []
        pos = bisect_left(self._ladder, key)
        k = max(0, k)
        return self._rows(pos - k, pos + k + 1)

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
        check_time(seen)
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
        check_time(now)
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
        check_time(at)
        self._pending[room_id] = at

    async def forget_table(self, room_id: str) -> None:
        self._pending.pop(room_id, None)

    async def take_stale_tables(self, before: float) -> list[str]:
        check_time(before)
        for room, at in self._pending.items():
            if at is not None and at <= before:
                self._pending[room] = None
        return sorted(room for room, at in self._pending.items() if at is None)

    async def close(self) -> None:
        self._session_journal.close()
