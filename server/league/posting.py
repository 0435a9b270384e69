"""Posting a rated game: read the pre-game ratings, rate, write everything at once, exactly once.

``post_rated_game(store, game)`` is the one call the server makes when a rated game ends. It
reads every participant's rating *with its version*, computes the new ratings with
``rate_game`` from those pre-game ratings, and asks the league store to write the game's
record and every new rating in one compare-and-set (``LeagueStore.post_game``):

- the game id was posted already (another node, a retry, a concurrent call): nothing changes,
  ALREADY_POSTED;
- a participant's version moved (another game of theirs was posted meanwhile): nothing
  changes, so re-read and recompute from the new pre-game ratings (bounded retries);
- otherwise it is POSTED, and only this one call posted it.

If the posting node dies before the store's single atomic write, nothing was written and the
next attempt (any node) posts it; after the write, every further attempt is ALREADY_POSTED.

Bot identities. A bot that sat down at the deal takes part as its level's identity
(``"bot:strong"``…), but a bot is an *anchor* (``server/core/ratings/anchors.py``): it enters every
comparison at its level's fixed, calibrated rating and is never updated, so only the humans'
ratings are read and written. Three bots of one level at a table therefore never rate each
other: nothing about a bot is ever rated. The record still lists each bot with its fixed rating
and a change of 0, so every seat of a finished game shows a line.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from server.core.bots.levels import BOT_LEVELS
from server.core.ratings.anchors import anchor_rating
from server.core.ratings.core import (
    PLAYERS_PER_GAME,
    Rating,
    conservative_rating,
    display_rating,
    is_provisional,
    rate_game,
)
from server.core.room.state import RoomState
from server.store.league import LeagueStore, PlayerRating, PostResult

log = logging.getLogger(__name__)

BOT_PREFIX = "bot:"
MAX_ATTEMPTS = 20
"""Compare-and-set rounds before giving up (CONFLICT); each round re-reads the ratings."""


def is_bot(participant: str) -> bool:
    return participant.startswith(BOT_PREFIX)


@dataclass(frozen=True, slots=True)
class RatedGame:
    """What the server hands in when a rated game ends. Every sequence is in seat order.

    participants  who sat down in each seat at the deal: a player id, or a bot level's identity
                  ``"bot:<level>"`` for a bot seated at the deal. A bot that took a seat over
                  mid-game is *not* a participant: the seat's player is, as a leaver.
    names         each participant's display name (shown on the ladder; a bot level's name
                  replaces whatever is given for a bot identity)
    scores        final game scores
    left          True for a player who left or was booted (last against everyone still seated,
                  whatever the score); never True for a bot participant
    departures    the room's departure records, kept in the game record as they are
    """

    game_id: str
    participants: tuple[str, ...]
    names: tuple[str, ...]
    scores: tuple[int, ...]
    left: tuple[bool, ...]
    target: int = 50
    room_id: str = ""
    finished_at: float = 0.0  # on the nodes' shared clock; also the history points' time
    departures: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        n = PLAYERS_PER_GAME
        if not self.game_id:
            raise ValueError("game_id must not be empty")
        for what in ("participants", "names", "scores", "left"):
            if len(getattr(self, what)) != n:
                raise ValueError(f"a rated game has {n} {what}")
        if not all(self.participants):
            raise ValueError("participant ids must not be empty")
        humans = [p for p in self.participants if not is_bot(p)]
        if len(set(humans)) != len(humans):
            raise ValueError("a player cannot hold two seats")
        if any(gone and is_bot(p) for p, gone in zip(self.participants, self.left, strict=True)):
            raise ValueError("a bot participant never leaves")
        if not math.isfinite(self.finished_at):
            raise ValueError("finished_at must be finite")

    @property
    def identities(self) -> list[str]:
        """The distinct participants, in order of their first seat."""
        return list(dict.fromkeys(self.participants))

    @property
    def humans(self) -> list[str]:
        """The rated participants (every one but the bot anchors), in seat order."""
        return [p for p in self.participants if not is_bot(p)]

    def name_of(self, participant: str) -> str:
        if is_bot(participant):
            level = BOT_LEVELS.get(participant.removeprefix(BOT_PREFIX))
            if level is not None:
                return level.name
        return self.names[self.participants.index(participant)]


def rated_game_from_room(state: RoomState, finished_at: float) -> RatedGame | None:
    """The rated game a finished room holds, or None if this game is not rated.

    Rated means: the room was opened rated, with the standard rules, and its game is over.
    The participant of a seat is ``seat.original`` (set at the deal); a player in the room's
    departures is a leaver; a departed player's name is the seat's name without the " (bot)"
    the room adds when a bot takes over.
    """
    game = state.game
    if not (state.options.rated and state.options.rules.standard):
        return None
    if game is None or state.status != "finished" or any(s is None for s in state.seats):
        return None
    departed = {d["player"] for d in state.departures}
    participants: list[str] = []
    names: list[str] = []
    for seat in state.seats:
        assert seat is not None
        original = seat.original or seat.player or f"{BOT_PREFIX}{seat.bot}"
        participants.append(original)
        names.append(seat.name if seat.player == original else seat.name.removesuffix(" (bot)"))
    if all(is_bot(p) for p in participants):
        return None  # bots alone at the deal: nobody to rate
    return RatedGame(
        game_id=state.game_id,
        participants=tuple(participants),
        names=tuple(names),
        scores=tuple(int(s) for s in game.scores),
        left=tuple(p in departed and not is_bot(p) for p in participants),
        target=state.options.rules.target,
        room_id=state.id,
        finished_at=finished_at,
        departures=tuple(dict(d) for d in state.departures),
    )


def participant_rating(participant: str, stored: Mapping[str, Rating]) -> Rating:
    """The rating a participant brings to the table: a bot's fixed anchor, else its stored one."""
    if is_bot(participant):
        return anchor_rating(participant.removeprefix(BOT_PREFIX))
    return stored[participant]


def rate_participants(game: RatedGame, before: Mapping[str, Rating]) -> dict[str, Rating]:
    """Every human participant's new rating from the pre-game ratings ``before`` (pure).

    ``before`` needs the humans only; each bot seat enters at its anchor and is not updated.
    """
    seats = game.participants
    per_seat = rate_game([participant_rating(p, before) for p in seats], game.scores, game.left)
    return {p: per_seat[i] for i, p in enumerate(seats) if not is_bot(p)}


def _rating_value(rating: Rating, games: int) -> dict[str, Any]:
    return {
        "mu": rating.mu,
        "sigma": rating.sigma,
        "display": display_rating(rating),  # the mean: what a player sees
        "conservative": conservative_rating(rating),  # what the ladder ranks by
        "games": games,
        "provisional": is_provisional(games),
    }


def game_record(
    game: RatedGame, before: Mapping[str, PlayerRating], after: Mapping[str, Rating]
) -> dict[str, Any]:
    """The record kept with the game (JSON): seats, scores, departures and rating changes.

    ``before`` and ``after`` cover the humans; a bot is listed at its anchor, change 0.
    """
    ratings: dict[str, Any] = {}
    for p in game.identities:
        if is_bot(p):
            fixed = participant_rating(p, {})
            value = {**_rating_value(fixed, 0), "provisional": False}
            ratings[p] = {"before": value, "after": value, "change": 0, "anchor": True}
            continue
        ratings[p] = {
            "before": _rating_value(before[p].rating, before[p].games),
            "after": _rating_value(after[p], before[p].games + 1),
            "change": display_rating(after[p]) - before[p].display,
            "anchor": False,
        }
    return {
        "game_id": game.game_id,
        "room_id": game.room_id,
        "target": game.target,
        "finished_at": game.finished_at,
        "seats": [
            {
                "participant": p,
                "name": game.name_of(p),
                "bot": is_bot(p),
                "score": game.scores[i],
                "left": game.left[i],
            }
            for i, p in enumerate(game.participants)
        ],
        "departures": [dict(d) for d in game.departures],
        "ratings": ratings,
    }


async def post_rated_game(
    store: LeagueStore, game: RatedGame, *, max_attempts: int = MAX_ATTEMPTS
) -> PostResult:
    """Rate and post ``game`` exactly once; see the module docstring.

    Returns POSTED (this call posted it), ALREADY_POSTED (it was posted before: done), or
    CONFLICT only if the participants' ratings kept moving for ``max_attempts`` rounds (the
    caller should try again later). Store errors propagate; nothing is half-written.
    """
    ids = game.humans
    for attempt in range(max_attempts):
        before = await store.get_players(ids)
        after = rate_participants(game, {p: before[p].rating for p in ids})
        updates = {p: PlayerRating(after[p], before[p].games + 1, game.name_of(p)) for p in ids}
        result = await store.post_game(
            game.game_id,
            game_record(game, before, after),
            {p: before[p].version for p in ids},
            updates,
            at=game.finished_at,
        )
        if result is not PostResult.CONFLICT:
            return result
        # Another game of one of these participants landed first. Back off a little, randomly,
        # so posters contending for a popular bot identity do not retry in lockstep.
        await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
    return PostResult.CONFLICT


async def post_room_ratings(
    store: LeagueStore, clock: Callable[[], float], state: RoomState
) -> list[dict[str, Any] | None] | None:
    """Post the finished rated game of room ``state`` exactly once: each seat's rating change
    (None for a seat that is not rated), or None when the room should try again later.

    The room service calls it when the room's ``rating_due`` comes, and steps the answer into
    the room as ``RatingsPosted``.
    """
    game = rated_game_from_room(state, clock())
    if game is None:
        return [None, None, None, None]
    try:
        result = await post_rated_game(store, game)
    except Exception:
        log.exception("posting ratings of %s failed; will retry", game.game_id)
        return None
    if result is PostResult.CONFLICT:
        return None
    record = await store.game_record(game.game_id)
    if record is None:
        return None
    ratings = record["ratings"]
    return [
        {"participant_bot": seat["bot"], **ratings[seat["participant"]]} for seat in record["seats"]
    ]
