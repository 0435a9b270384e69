"""Handing finished games to the store of record, exactly once, with their rating changes.

The outbox is the room itself. The commit that ends a game (``server/core/room/game_steps.py``
``finish_game``) adds the game's id to the room's ``unarchived`` list and sets ``archive_due``;
in the same compare-and-set, the shell writes the game's record (``game_value``) into the room's
archive beside its hands' records (``server/play/rooms.py`` ``archive_of``). From then on the
room is due: whichever node's scheduler claims it calls ``Archiver.archive``, which

1. reads the game's records from the room store and checks them into a ``GameRecord``;
2. for a rated game, reads the humans' ratings with their versions, rates the game, and
   hands the record and the changes to ``RecordStore.archive_game``: one SQL transaction that
   keeps the game and posts its ratings by compare-and-set (a participant's version moved:
   re-read and recompute);
3. reads back what the store kept for the game's ratings, so a retry after a crash shows the
   same changes as the first attempt did.

The room then steps ``GamesArchived`` in, which takes the game out of its outbox and shows the
``ratings``. Every step is idempotent: the game's id is the archive's key (a second write is a
no-op), and a node killed anywhere in between leaves the room due, so another node does it
again. A database that fails only delays this (``GamesArchived`` with ``None``: retry later);
play goes on, and a room keeps its keys while its outbox is not empty.

>>> archiver = Archiver(record_store, room_store)  # doctest: +SKIP
>>> await archiver.archive("k3Xq9", ("k3Xq9.1",))  # doctest: +SKIP
(ArchivedGame(game_id='k3Xq9.1', seats=({'participant_bot': False, 'change': 12, ...}, ...)),)
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import msgpack

from server.core.ratings.core import Rating, display_rating
from server.core.room.commands import ArchivedGame
from server.core.room.state import RoomState
from server.league.rated_games import (
    BOT_PREFIX,
    RatedGame,
    is_bot,
    participant_rating,
    rate_participants,
    rating_value,
)
from server.ops import metrics
from server.ops.outage_log import OutageLog
from server.record.records import GameRecord, RatingChange, RecordError
from server.record.store import ArchiveResult, RecordStore
from server.record.values import PlayerRating
from server.store.rooms import RoomStore

log = logging.getLogger(__name__)

GAME_RECORD = "game"  # the name of the game's record in the room's archive
MAX_ATTEMPTS = 20  # compare-and-set rounds of one game's ratings before trying later
ATTEMPT_SECONDS = 10.0  # one game's archive gives up after this (a database that hangs)
PROBE_EVERY = 2.0  # while the database fails, one attempt per this many seconds, node-wide


def game_value(state: RoomState) -> dict[str, Any]:
    """The record of the room's finished game, without its hands (they are archived as each
    hand ends): written by the commit that ends the game. A seat's participant is who sat
    down at the deal (``seat.original``): a player id, or a bot (then ``participant`` is None
    and ``bot`` its level); a player who left keeps the seat, named without " (bot)"."""
    seats: list[dict[str, Any]] = []
    for i, seat in enumerate(state.seats):
        assert seat is not None, "a finished game has four seats"
        original = seat.original or seat.player or f"{BOT_PREFIX}{seat.bot}"
        human = not is_bot(original)
        seats.append(
            {
                "seat": i,
                "participant": original if human else None,
                "name": seat.name if seat.player == original else seat.name.removesuffix(" (bot)"),
                "bot": None if human else original.removeprefix(BOT_PREFIX),
            }
        )
    game = state.game
    assert game is not None
    return {
        "game_id": state.game_id,
        "room_id": state.id,
        "kind": state.kind,
        "options": state.options.public(),
        "started_at": state.game_started,
        "finished_at": max(state.game_finished, state.game_started),
        "scores": [int(s) for s in game.scores],
        "winners": list(game.winners),
        "rated": bool(
            state.options.rated
            and state.options.rules.standard
            and any(s["participant"] is not None for s in seats)
        ),
        "departures": [dict(d) for d in state.departures],
        "seats": seats,
    }


def record_of(records: Mapping[str, bytes]) -> GameRecord:
    """The checked ``GameRecord`` of a game's archive: its ``game`` record and every hand's
    ``N:over`` and ``N:audit`` records (``RecordError`` if anything is malformed)."""
    raw = records.get(GAME_RECORD)
    if raw is None:
        raise RecordError("the archive holds no game record")
    value = msgpack.unpackb(raw, raw=False)
    hands: dict[int, dict[str, Any]] = {}
    for name, data in records.items():
        number, _, kind = name.partition(":")
        if kind in ("over", "audit") and number.isdigit():
            n = int(number)
            hand = hands.setdefault(n, {"number": n, "over": None, "audit": None})
            hand[kind] = msgpack.unpackb(data, raw=False)
    return GameRecord.from_value({**value, "hands": [hands[n] for n in sorted(hands)]})


def rated_game(record: GameRecord) -> RatedGame:
    """The record as the rating code takes it: a participant per seat (a bot as its level's
    anchor), and a leaver for every human in the departures."""
    participants = tuple(s.participant or f"{BOT_PREFIX}{s.bot}" for s in record.seats)
    departed = {d.get("player") for d in record.departures}
    return RatedGame(
        game_id=record.game_id,
        participants=participants,
        names=tuple(s.name or "" for s in record.seats),
        scores=record.scores,
        left=tuple(p in departed and not is_bot(p) for p in participants),
        target=int(record.options.get("target", 100)),
        room_id=record.room_id,
        finished_at=record.finished_at,
    )


def rating_changes(
    record: GameRecord, before: Mapping[str, PlayerRating]
) -> tuple[GameRecord, list[RatingChange]]:
    """The game's rating changes from the pre-game ratings ``before`` (humans only), and the
    record with each human seat's shown rating before and after (pure)."""
    game = rated_game(record)
    after = rate_participants(game, {p: before[p].rating for p in game.humans})
    changes = [
        RatingChange(
            p,
            before[p].version,
            before[p].rating.mu,
            before[p].rating.sigma,
            after[p].mu,
            after[p].sigma,
            before[p].games + 1,
        )
        for p in game.humans
    ]
    seats = tuple(
        s
        if s.participant is None
        else replace(
            s,
            rating_before=display_rating(before[s.participant].rating),
            rating_after=display_rating(after[s.participant]),
        )
        for s in record.seats
    )
    return replace(record, seats=seats), changes


def seat_changes(
    record: GameRecord, kept: Mapping[str, tuple[Rating, Rating, int]]
) -> tuple[dict[str, Any] | None, ...]:
    """The ``ratings`` event's seats: each human's kept change (``RecordStore.rating_changes``),
    each bot at its fixed anchor with a change of 0. A seat with no kept change (a player who
    deleted their account) shows nothing."""
    seats: list[dict[str, Any] | None] = []
    for s in record.seats:
        if s.participant is None:
            fixed = rating_value(participant_rating(f"{BOT_PREFIX}{s.bot}", {}), 0)
            value = {**fixed, "provisional": False}
            seats.append(
                {"participant_bot": True, "before": value, "after": value, "change": 0,
                 "anchor": True}
            )
            continue
        if s.participant not in kept:
            seats.append(None)
            continue
        before, after, games = kept[s.participant]
        seats.append(
            {
                "participant_bot": False,
                "before": rating_value(before, games - 1),
                "after": rating_value(after, games),
                "change": display_rating(after) - display_rating(before),
                "anchor": False,
            }
        )
    return tuple(seats)


class Archiver:
    """Takes a room's finished games into the store of record (see the module docstring)."""

    def __init__(
        self, records: RecordStore, rooms: RoomStore, clock: Callable[[], float] = time.time
    ) -> None:
        self.records = records
        self.rooms = rooms
        self.clock = clock  # the nodes' shared clock, which the game's finish was taken on
        self.outage = OutageLog(log, "the store of record (finished games wait in their rooms)")
        self._last_attempt = 0.0

    async def archive(
        self, room_id: str, game_ids: Sequence[str]
    ) -> tuple[ArchivedGame, ...] | None:
        """Archive each game; None when the database failed (the room asks again later)."""
        if self.outage.failures and time.monotonic() - self._last_attempt < PROBE_EVERY:
            return None  # an outage: one probe at a time, not one per waiting room
        self._last_attempt = time.monotonic()
        done: list[ArchivedGame] = []
        try:
            for game_id in game_ids:
                async with asyncio.timeout(ATTEMPT_SECONDS):
                    archived = await self._archive_one(room_id, game_id)
                if archived is None:
                    break  # ratings kept moving: the rest waits for the next attempt
                done.append(archived)
        except asyncio.CancelledError:
            raise
        except Exception:
            self.outage.failed()
            return tuple(done) if done else None
        self.outage.succeeded()
        return tuple(done)

    async def _archive_one(self, room_id: str, game_id: str) -> ArchivedGame | None:
        try:
            record = record_of(await self.rooms.archived(room_id, game_id))
        except (RecordError, ValueError, TypeError, msgpack.UnpackException):
            # Nothing to keep (the room's records were lost with its store, or are corrupt):
            # said once, and the game leaves the outbox rather than block it for ever.
            log.error("game %s of room %s cannot be archived", game_id, room_id, exc_info=True)
            return ArchivedGame(game_id)
        if not record.rated:
            self._kept(record, await self.records.archive_game(record))
            return ArchivedGame(game_id)
        game = rated_game(record)
        for attempt in range(MAX_ATTEMPTS):
            before = await self.records.ratings(game.humans)
            rated, changes = rating_changes(record, before)
            result = await self.records.archive_game(rated, changes)
            if result is not ArchiveResult.CONFLICT:
                self._kept(record, result)
                kept = await self.records.rating_changes(game_id, game.humans, record.finished_at)
                return ArchivedGame(game_id, seat_changes(record, kept))
            # Another game of a participant landed first: re-read, recompute, not in lockstep.
            await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        return None

    def _kept(self, record: GameRecord, result: ArchiveResult) -> None:
        if result is ArchiveResult.ARCHIVED:
            metrics.ARCHIVE_LAG.observe(max(0.0, self.clock() - record.finished_at))
