"""A whole game: hand after hand, running scores, the moon rule, the end and the winners.

The game never shuffles: each hand's deal is an input (``start_hand``), so the engine stays
deterministic and the fair-deal protocol lives outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from .errors import IllegalMove
from .hand import Hand, HandPhase, PassDirection
from .options import Moon, Rules, Tie

_PLAYING = HandPhase.PLAYING
_OVER = HandPhase.OVER


class Phase(StrEnum):
    DEAL = "deal"  # waiting for the next hand's deal
    PASSING = "passing"
    PLAYING = "playing"
    MOON_CHOICE = "moon_choice"  # the shooter picks how the moon scores (shooter_chooses)
    OVER = "over"


class Game:
    """A game of Hearts under ``rules``. Mutable; ``copy()`` and ``to_value()`` give values."""

    __slots__ = (
        "hand",
        "hand_number",
        "history",
        "moon_chooser",
        "over",
        "playoff",
        "rules",
        "scores",
        "winners",
    )

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules or Rules()
        self.scores = [0, 0, 0, 0]
        self.hand_number = 0
        self.hand: Hand | None = None
        self.history: list[list[int]] = []  # points scored per seat, one entry per finished hand
        self.moon_chooser = -1
        self.playoff = False
        self.over = False
        self.winners: list[int] = []

    # -- queries ---------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        if self.over:
            return Phase.OVER
        if self.moon_chooser >= 0:
            return Phase.MOON_CHOICE
        hand = self.hand
        if hand is None or hand.phase is HandPhase.OVER:
            return Phase.DEAL
        return Phase.PASSING if hand.phase is HandPhase.PASSING else Phase.PLAYING

    @property
    def next_direction(self) -> PassDirection:
        return PassDirection.for_hand(self.hand_number + 1)

    def legal_plays(self, seat: int) -> int:
        return self.hand.legal_plays(seat) if self.hand is not None else 0

    # -- moves -----------------------------------------------------------------------------

    def start_hand(self, deal: Sequence[int]) -> Hand:
        """Deal the next hand: ``deal[s]`` is the 13-card set of seat ``s``."""
        if self.phase is not Phase.DEAL:
            raise IllegalMove("wrong_phase", "The current hand is not finished.")
        self.hand = Hand.deal(
            deal,
            PassDirection.for_hand(self.hand_number + 1),
            revokes_allowed=self.rules.revokes == "allowed",
        )
        self.hand_number += 1
        return self.hand

    def pass_cards(self, seat: int, cards: int) -> bool:
        self._require(Phase.PASSING)
        return self.hand.choose_pass(seat, cards)  # type: ignore[union-attr]

    def play(self, seat: int, card: int) -> int:
        """Play a card; returns the trick's winner when the card completed a trick, else -1."""
        hand = self.hand
        if hand is None or hand.phase is not _PLAYING:
            self._require(Phase.PLAYING)
        winner = hand.play(seat, card)  # type: ignore[union-attr]
        if winner >= 0 and hand.phase is _OVER:  # type: ignore[union-attr]
            self._score_hand()
        return winner

    def call_revoke(self, accuser: int, accused: int) -> bool:
        self._require(Phase.PLAYING)
        guilty = self.hand.call_revoke(accuser, accused)  # type: ignore[union-attr]
        self._score_hand()
        return guilty

    def choose_moon(self, seat: int, choice: Moon | str) -> None:
        """The shooter's pick under ``shooter_chooses``: others get 26, or shooter takes 26 off."""
        self._require(Phase.MOON_CHOICE)
        if seat != self.moon_chooser:
            raise IllegalMove("not_your_turn", "Only the seat that shot the moon chooses.")
        try:
            choice = Moon(choice)
        except ValueError:
            choice = Moon.SHOOTER_CHOOSES
        if choice is Moon.SHOOTER_CHOOSES:
            raise IllegalMove("bad_moon_choice", "Choose others_26 or shooter_minus_26.")
        self.moon_chooser = -1
        self._finish_hand(_moon_points(seat, choice))

    def end_without(self, absent: Sequence[int]) -> list[int]:
        """End the game now because the ``absent`` seats stopped playing (correspondence pace):
        the lowest score among the seats still present wins. Returns the winners."""
        present = [s for s in range(4) if s not in absent]
        if self.over or not present:
            raise IllegalMove("wrong_phase", "This game cannot be ended that way now.")
        low = min(self.scores[s] for s in present)
        self.moon_chooser = -1
        self._end([s for s in present if self.scores[s] == low])
        return self.winners

    # -- internals -------------------------------------------------------------------------

    def _require(self, phase: Phase) -> None:
        if self.phase is not phase:
            raise IllegalMove(
                "wrong_phase", f"That move is not possible now (the game is in {self.phase})."
            )

    def _score_hand(self) -> None:
        hand = self.hand
        assert hand is not None
        shooter = hand.shooter()
        if shooter is None:
            self._finish_hand(hand.points())
        elif self.rules.moon is Moon.SHOOTER_CHOOSES:
            self.moon_chooser = shooter
        else:
            self._finish_hand(_moon_points(shooter, self.rules.moon))

    def _finish_hand(self, points: list[int]) -> None:
        # Replaced, not changed: copies of the game share them (``copy``).
        self.history = [*self.history, points]
        scores = self.scores = [self.scores[s] + points[s] for s in range(4)]
        low = min(scores)
        lowest = [s for s in range(4) if scores[s] == low]
        if self.playoff:
            # Play-off hands go on until one seat alone has the lowest score.
            if len(lowest) == 1:
                self._end(lowest)
        elif max(scores) >= self.rules.target:
            if len(lowest) == 1 or self.rules.tie is Tie.SHARE:
                self._end(lowest)
            else:
                self.playoff = True

    def _end(self, winners: list[int]) -> None:
        self.over = True
        self.winners = winners

    # -- values ----------------------------------------------------------------------------

    def copy(self) -> Game:
        """An independent game. The scores, the history (and its entries) and the winners are
        shared: a game replaces them, never changes them in place, so only the hand is copied
        (a room copies its game at every step, and every list copied is work for the garbage
        collector: the history's copy grew with every hand played)."""
        other = Game(self.rules)
        other.scores = self.scores
        other.hand_number = self.hand_number
        other.hand = self.hand.copy() if self.hand is not None else None
        other.history = self.history
        other.moon_chooser = self.moon_chooser
        other.playoff = self.playoff
        other.over = self.over
        other.winners = self.winners
        return other

    def to_value(self) -> list[object]:
        """Plain ints, strings and lists; ``Game.from_value`` restores an equal game."""
        return [
            self.rules.to_value(),
            self.scores.copy(),
            self.hand_number,
            self.hand.to_value() if self.hand is not None else None,
            [p.copy() for p in self.history],
            self.moon_chooser,
            self.playoff,
            self.over,
            self.winners.copy(),
        ]

    @classmethod
    def from_value(cls, value: Sequence[Any]) -> Game:
        rules, scores, hand_number, hand, history, moon_chooser, playoff, over, winners = value
        game = cls(Rules.from_value(rules))
        game.scores = [int(s) for s in scores]
        game.hand_number = int(hand_number)
        game.hand = Hand.from_value(hand) if hand is not None else None
        game.history = [[int(p) for p in h] for h in history]
        game.moon_chooser = int(moon_chooser)
        game.playoff = bool(playoff)
        game.over = bool(over)
        game.winners = [int(w) for w in winners]
        return game

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Game):
            return NotImplemented
        return self.to_value() == other.to_value() and self.hand == other.hand

    __hash__ = None  # type: ignore[assignment]


def _moon_points(shooter: int, moon: Moon) -> list[int]:
    if moon is Moon.SHOOTER_MINUS_26:
        return [-26 if s == shooter else 0 for s in range(4)]
    return [0 if s == shooter else 26 for s in range(4)]
