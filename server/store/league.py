"""The league store: the quick-play queue, its seat assignments and pending tables, and (from
``SessionStore``, ``server/store/sessions.py``) sessions and throttles.

It sits beside the room store (``server/store/rooms.py``) and, like it, has two backends that
pass one contract suite (``tests/contract/test_league_contract.py``): Redis for a deployment
(``redis/league.py``, one Lua script per atomic operation) and an in-process store for the
embedded single-node default (``memory/league.py``). Ratings, the ladder, finished games and
account rows are not here: they live in the store of record (``server/record``).

The quick-play queue (docs/ratings.md, "Quick-play matching")
    One entry per player (``enqueue`` replaces it). ``seat_tables`` seats whole tables
    atomically: a table is seated only if every one of its players is still queued, and then
    they leave the queue and each gets an *assignment* (the room id) that their node picks up
    with ``take_assignment``. A player with an assignment not yet taken cannot re-enter the
    queue, so nobody is ever at two tables. Each entry has a "last seen" time that the
    player's node refreshes (``touch_queue``); the matchmaker purges entries not seen for a
    while, so the players of a node that died are not seated as phantoms. *Pending tables* are
    a small journal for the matchmaker: a room created for a table but not yet seated is
    noted, so if the matchmaker's node dies in between, the next lease holder finds and
    abandons that room.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence

from matchmaker.matching import TARGETS, QueueEntry
from server.store.sessions import SessionStore

DEFAULT_ASSIGNMENT_TTL = 3600.0
"""Seconds an untaken seat assignment is kept (a player who never comes back frees it)."""


Seating = tuple[str, Sequence[str]]
"""One table for ``seat_tables``: (room id, the ids of the players to seat there)."""


def check_seatings(assignments: Sequence[Seating]) -> None:
    for room_id, players in assignments:
        if not room_id or not players:
            raise ValueError("a table needs a room id and at least one player")
        if len(set(players)) != len(players):
            raise ValueError(f"a player appears twice at table {room_id!r}")


def check_entry(entry: QueueEntry) -> None:
    if not entry.player_id:
        raise ValueError("player_id must not be empty")
    if entry.target not in TARGETS:  # QueueEntry checks this too; a cheap guard for subclasses
        raise ValueError(f"target must be one of {TARGETS}")


def encode_entry(entry: QueueEntry) -> str:
    """The stored form of a queue entry; two entries are the same iff their encodings are."""
    return f"{entry.target}|{entry.display}|{entry.joined_at!r}"


def decode_entry(player_id: str, encoded: str) -> QueueEntry:
    target, display, joined_at = encoded.split("|")
    return QueueEntry(player_id, int(display), int(target), float(joined_at))  # type: ignore[arg-type]


class LeagueStore(SessionStore, ABC):
    """The quick-play queue, seat assignments, pending tables and (from ``SessionStore``)
    sessions and throttles; see the module docstring.

    Every method is atomic on its own and safe to call concurrently from many tasks and, for the
    Redis backend, from many nodes.
    """

    # The quick-play queue ---------------------------------------------------------------------

    @abstractmethod
    async def enqueue(self, entry: QueueEntry, name: str, *, now: float | None = None) -> bool:
        """Put the player in the queue, replacing any entry it had (one entry per player).

        ``now`` (default: the entry's ``joined_at``) marks the entry as seen alive; see
        ``touch_queue``. Returns False, changing nothing, while the player has a seat
        assignment not yet taken: the caller should ``take_assignment`` and send the player to
        that room.
        """

    @abstractmethod
    async def touch_queue(self, player_ids: Iterable[str], now: float) -> int:
        """Mark these players' entries as seen alive at ``now`` (a node does this every few
        seconds for the queued players connected to it); returns how many are queued."""

    @abstractmethod
    async def purge_queue(self, before: float) -> list[str]:
        """Remove and return the players whose entries were last seen at or before ``before``:
        their node died without dequeuing them, so they must not be seated."""

    @abstractmethod
    async def dequeue(self, player_id: str) -> bool:
        """Take the player out of the queue; True if it was queued."""

    @abstractmethod
    async def queued(self, player_id: str) -> QueueEntry | None:
        """The player's queue entry, or None."""

    @abstractmethod
    async def queue_entries(self, target: int | None = None) -> list[QueueEntry]:
        """Everyone queued (for ``target`` only, if given), earliest joiner first."""

    @abstractmethod
    async def queue_names(self, player_ids: Iterable[str]) -> dict[str, str]:
        """The names given at ``enqueue`` of those players still queued."""

    @abstractmethod
    async def seat_tables(
        self,
        assignments: Sequence[Seating],
        *,
        expected: Mapping[str, QueueEntry] | None = None,
    ) -> list[bool]:
        """Seat each table atomically, in order; one bool per table.

        A table is seated only if every one of its players is still queued — and, when
        ``expected`` is given, still with exactly that entry (same target, rating and join
        time, so a player who re-queued for another target meanwhile is not seated by a stale
        decision). Then its players leave the queue, each gets the room id as its assignment
        and the room's pending-table note is cleared. A table whose room is marked as being
        abandoned (``take_stale_tables``) is not seated. A failed table changes nothing (its
        pending note stays until ``forget_table``). A player can therefore be seated at most
        once, even by two matchmakers racing.
        """

    @abstractmethod
    async def take_assignment(self, player_id: str) -> str | None:
        """The room the player was seated at, read and deleted (only one caller gets it)."""

    @abstractmethod
    async def take_assignments(self, player_ids: Iterable[str]) -> dict[str, str]:
        """``take_assignment`` for many players in one round trip (a node's poll)."""

    # Pending tables (the matchmaker's journal) -------------------------------------------------

    @abstractmethod
    async def note_table(self, room_id: str, at: float) -> None:
        """Note a room created for a table that ``seat_tables`` has not seated yet."""

    @abstractmethod
    async def forget_table(self, room_id: str) -> None:
        """Drop the note (the room was abandoned)."""

    @abstractmethod
    async def take_stale_tables(self, before: float) -> list[str]:
        """Mark the rooms noted at or before ``before`` as being abandoned and return every
        room so marked and not yet forgotten (also ones marked by an earlier call whose caller
        died before ``forget_table``).

        ``seat_tables`` never seats a marked room, so a room is either seated or abandoned,
        never both, even if the matchmaker that created it was only slow, not dead.
        """

    # Lifecycle -----------------------------------------------------------------------------

    @abstractmethod
    async def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
