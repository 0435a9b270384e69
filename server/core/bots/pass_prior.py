"""What the pass says about the other hands' suit lengths: a weight for each deal of the unseen
cards.

Players pass to empty a short suit, so after a pass the hands are far from a uniform deal: a
seat is void in clubs or diamonds about four times as often as a uniform deal of the unseen cards
has it, and the seat that passed us no clubs holds more of them than such a deal gives it. The
walks' sampler deals the unseen cards uniformly among what fits the play; weighing each deal by
``LengthPrior.scale`` (for each other seat and suit, how much more often that seat held that
many cards of the suit after a real pass than in a uniform deal: ``pass_table.py``, simulated
by ``load_tests.pass_lengths`` with every seat passing as strong and basic do) makes its deals
fall as after a real pass. A seat's length is what it held after the pass: its cards now and
those it has played.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from server.core.rules import SUIT_MASKS

from .knowledge import Knowledge
from .pass_table import LENGTH_WEIGHTS

LENGTHS = 14  # 0..13 cards of a suit
Table = Mapping[tuple[int, int, int, int], tuple[float, ...]]
_EVEN = (1.0,) * LENGTHS


@dataclass(frozen=True, slots=True)
class LengthPrior:
    """A deal's weight from the pass: ``weights[seat * 56 + suit * 14 + length]`` (1.0 for our
    own seat), the length counting the cards of ``played`` (by seat) too."""

    played: tuple[int, int, int, int]
    weights: tuple[float, ...]

    def scale(self, w: float, hands: Sequence[int], seat: int) -> float:
        """``w`` times the weights of ``seat``'s four suit lengths in ``hands``, suit by suit
        (the order the compiled walks multiply in, so that both give the same floats)."""
        held = hands[seat] | self.played[seat]
        for suit in range(4):
            w *= self.weights[seat * 56 + suit * LENGTHS + (held & SUIT_MASKS[suit]).bit_count()]
        return w


def prior_of(
    direction: int, me: int, received: int, played: Sequence[int], table: Table
) -> LengthPrior:
    """The weights for seat ``me`` passed ``received`` in a hand passing ``direction``."""
    weights: list[float] = []
    for s in range(4):
        offset = (s - me) & 3
        for suit in range(4):
            given = (received & SUIT_MASKS[suit]).bit_count()
            weights.extend(table.get((direction, offset, suit, given), _EVEN) if offset else _EVEN)
    return LengthPrior((played[0], played[1], played[2], played[3]), tuple(weights))


def length_prior(k: Knowledge) -> LengthPrior | None:
    """The pass's weights for ``k``, or None in a hand without a pass (or before it is done)."""
    if not k.direction or not k.received:
        return None
    return prior_of(k.direction, k.seat, k.received, k.played_by, LENGTH_WEIGHTS)
