"""Rating a finished game: who takes part, and every human's new rating (pure).

``rate_participants(game, before)`` is what the archive (``archiving.py``) calls for a rated game,
with the pre-game ratings it read (with their versions) from the store of record; the store then
keeps the game and the new ratings in one transaction, by compare-and-set.

Bot identities. A bot that sat down at the deal takes part as its level's identity
(``"bot:strong"``…), but a bot is an *anchor* (``server/core/ratings/anchors.py``): it enters every
comparison at its level's fixed, calibrated rating and is never updated, so only the humans'
ratings are read and written. Three bots of one level at a table therefore never rate each
other: nothing about a bot is ever rated. The ``ratings`` event still shows each bot at its fixed
rating with a change of 0, so every seat of a finished game shows a line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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

BOT_PREFIX = "bot:"


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


def rating_value(rating: Rating, games: int) -> dict[str, Any]:
    """A rating as the ``ratings`` event shows it, after ``games`` rated games."""
    return {
        "mu": rating.mu,
        "sigma": rating.sigma,
        "display": display_rating(rating),  # the mean: what a player sees
        "conservative": conservative_rating(rating),  # what the ladder ranks by
        "games": games,
        "provisional": is_provisional(games),
    }
