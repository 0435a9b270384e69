"""The values the store of record reads back: an account, a rating, a history point, a ladder row.

Plain immutable values, made by the row modules (``accounts.py``, ``ratings.py``) and returned
by ``RecordStore`` (``store.py``); the league (``server/league``) and the accounts service
(``server/accounts``) read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from server.core.ratings import Rating, display_rating, is_provisional, new_rating


@dataclass(frozen=True, slots=True)
class Account:
    player_id: str
    name: str  # as shown
    name_key: str  # the uniqueness key: the name's confusable skeleton
    password_hash: str  # argon2id, PHC string format
    created_at: float


@dataclass(frozen=True, slots=True)
class PlayerRating:
    """A participant's rating as kept. A participant never rated has the defaults."""

    rating: Rating = field(default_factory=new_rating)
    games: int = 0  # rated games played
    name: str = ""
    version: int = 0  # bumped by every archived game that rates this participant; 0: never

    @property
    def display(self) -> int:
        return display_rating(self.rating)

    @property
    def provisional(self) -> bool:
        return is_provisional(self.games)


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """A participant's rating right after one rated game."""

    game_id: str
    at: float  # when the game finished
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


class LadderRow(NamedTuple):
    rank: int
    player_id: str
    name: str
    display: int  # the shown rating (the mean)
    games: int
    conservative: int  # what the ladder ranks by
