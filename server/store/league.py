"""The league store: ratings, the ladder, posted games and the quick-play queue.

It sits beside the room store (``server/store/rooms.py``) and, like it, has two backends that
pass one contract suite (``tests/contract/test_league_contract.py``): Redis for a deployment
(``redis/league.py``, one Lua script per atomic operation) and an in-process store for the
embedded single-node default (``memory/league.py``). It never computes a rating: callers do
(``server/league/posting.py``) and hand the store the results to write atomically.

Ratings (docs/ratings.md)
    Every participant — a player id, or a bot level's identity such as ``"bot:strong"`` — has a
    ``PlayerRating``: its TrueSkill ``Rating``, rated games played, display name and a version.
    ``post_game`` writes a game's record and every participant's new rating in one step, and
    only if (a) the game was never posted and (b) every participant's version is still the one
    the caller read (compare-and-set). So a game posts exactly once, even when two nodes try,
    and two games sharing a player never overwrite each other's update.

The ladder
    Accounts (``server/store/accounts.py``; never guests, never bots) that are no longer
    provisional (``PROVISIONAL_GAMES`` rated games or more), ranked by their conservative rating
    (mu − 3 sigma on the display scale), highest first; each row also carries the shown rating
    (the mean). Ranks are competition ranks: equal scores share a rank and the next rank skips
    (1, 2, 2, 4); within equal scores rows are ordered by id. A guest who claims an account
    goes on the ladder at once if it has played enough.

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

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple

from matchmaker.matching import TARGETS, QueueEntry
from server.core.ratings import Rating, display_rating, is_provisional, ladder_score, new_rating
from server.store.accounts import AccountStore

DEFAULT_HISTORY_CAP = 200
"""Rating-history points kept per player (newest first); older ones are dropped."""
DEFAULT_RECENT_CAP = 50
"""Recent game ids kept per player."""
DEFAULT_ASSIGNMENT_TTL = 3600.0
"""Seconds an untaken seat assignment is kept (a player who never comes back frees it)."""


class PostResult(Enum):
    POSTED = "posted"  # this call wrote the game (also on a client's retry of that same call)
    ALREADY_POSTED = "already_posted"  # the game id was posted before; nothing changed
    CONFLICT = "conflict"  # a participant's version moved; nothing changed: re-read, recompute


@dataclass(frozen=True, slots=True)
class PlayerRating:
    """A participant's rating as stored. A participant never seen has the defaults."""

    rating: Rating = field(default_factory=new_rating)
    games: int = 0  # rated games played
    name: str = ""
    version: int = 0  # bumped by every post_game that rates this participant; 0: never rated

    @property
    def display(self) -> int:
        return display_rating(self.rating)

    @property
    def provisional(self) -> bool:
        return is_provisional(self.games)

    @property
    def ladder_score(self) -> int | None:
        return ladder_score(self.rating, self.games)


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """A participant's rating right after one posted game."""

    game_id: str
    at: float  # when the game was posted (the caller's shared clock)
    mu: float
    sigma: float
    display: int
    games: int

    def to_value(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "at": self.at,
            "mu": self.mu,
            "sigma": self.sigma,
            "display": self.display,
            "games": self.games,
        }

    @classmethod
    def from_value(cls, v: Mapping[str, Any]) -> HistoryPoint:
        return cls(
            str(v["game"]),
            float(v["at"]),
            float(v["mu"]),
            float(v["sigma"]),
            int(v["display"]),
            int(v["games"]),
        )


class LadderRow(NamedTuple):
    rank: int
    player_id: str
    name: str
    display: int  # the shown rating (the mean)
    games: int
    conservative: int  # what the ladder ranks by


Seating = tuple[str, Sequence[str]]
"""One table for ``seat_tables``: (room id, the ids of the players to seat there)."""


def check_post(
    game_id: str, expected: Mapping[str, int], updates: Mapping[str, PlayerRating]
) -> None:
    """Reject a malformed post before anything is written (both backends)."""
    if not game_id:
        raise ValueError("game_id must not be empty")
    if set(expected) != set(updates):
        raise ValueError("expected and updates must name the same participants")
    if not updates:
        raise ValueError("a posted game rates at least one participant")
    for pid, update in updates.items():
        if not pid:
            raise ValueError("participant ids must not be empty")
        if update.games < 0 or expected[pid] < 0:
            raise ValueError("games and versions are never negative")


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


def history_point(game_id: str, at: float, update: PlayerRating) -> HistoryPoint:
    return HistoryPoint(
        game_id, at, update.rating.mu, update.rating.sigma, update.display, update.games
    )


def check_time(at: float) -> None:
    if not math.isfinite(at):
        raise ValueError(f"time must be finite, got {at!r}")


class LeagueStore(AccountStore, ABC):
    """Ratings, the ladder, game records, the quick-play queue and (from ``AccountStore``)
    accounts, sessions and throttles; see the module docstring.

    Every method is atomic on its own and safe to call concurrently from many tasks and, for the
    Redis backend, from many nodes.
    """

    # Ratings and games ---------------------------------------------------------------------

    @abstractmethod
    async def get_players(self, player_ids: Iterable[str]) -> dict[str, PlayerRating]:
        """Each participant's stored rating; one never rated gets ``PlayerRating()`` (version 0,
        the default rating, 0 games, name "" unless ``set_name`` gave one)."""

    @abstractmethod
    async def set_name(self, player_id: str, name: str) -> None:
        """Set the name the ladder shows. Does not bump the version (a rename never makes a
        concurrent posting conflict)."""

    @abstractmethod
    async def post_game(
        self,
        game_id: str,
        record: Mapping[str, Any],
        expected: Mapping[str, int],
        updates: Mapping[str, PlayerRating],
        *,
        at: float,
    ) -> PostResult:
        """Post one rated game, atomically.

        If ``game_id`` was posted before: ALREADY_POSTED. Else if any participant's stored
        version differs from ``expected[id]``: CONFLICT. In both cases nothing changes.
        Otherwise: keep ``record`` (JSON-serialisable) as the game's record; for each
        participant store ``updates[id]``'s rating, games and name with version
        ``expected[id] + 1`` (the update's own ``version`` is ignored), prepend a
        ``HistoryPoint`` at ``at`` to its history and the game id to its recent games (both
        capped), and, if it is an account, put it on the ladder at its ``ladder_score`` if it is
        no longer provisional (or take it off if it is); return POSTED.
        """

    @abstractmethod
    async def game_record(self, game_id: str) -> dict[str, Any] | None:
        """The record posted with the game, or None."""

    @abstractmethod
    async def history(self, player_id: str, limit: int = 50) -> list[HistoryPoint]:
        """The participant's rating after each of its latest games, newest first."""

    @abstractmethod
    async def recent_games(self, player_id: str, limit: int = 10) -> list[dict[str, Any]]:
        """The records of the participant's latest games, newest first."""

    # The ladder ------------------------------------------------------------------------------

    @abstractmethod
    async def ladder(self, offset: int = 0, limit: int = 50) -> list[LadderRow]:
        """Rows ``offset`` to ``offset + limit - 1`` of the ladder (0-based positions)."""

    @abstractmethod
    async def ladder_size(self) -> int:
        """How many participants are on the ladder."""

    @abstractmethod
    async def rank_of(self, player_id: str) -> int | None:
        """The participant's rank (1 = top), or None if it is not on the ladder."""

    @abstractmethod
    async def around(self, player_id: str, k: int = 5) -> list[LadderRow]:
        """The participant's row with up to ``k`` rows above and ``k`` below; [] if unranked."""

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
