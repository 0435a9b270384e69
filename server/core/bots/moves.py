"""A bot's answer as the room takes it, and the one move every seat can always make.

``Move`` is what a bot sends the room: ``("pass", card set)``, ``("play", card)`` or
``("moon", choice)``. ``random_move`` is the ``random`` level and the fallback when a bot fails
or answers with a move the rules refuse, so a bot never stalls a table.
"""

from __future__ import annotations

import random
from typing import Any

from protocol.cards import mask_of_names, parse_card

from .decisions import Decision

Move = tuple[str, Any]


def random_move(view: dict[str, Any], seed: int | None = None) -> Move:
    """Any legal move for the seat whose view this is, chosen by ``seed``.

    >>> random_move({"phase": "moon_choice"})
    ('moon', 'others_26')
    """
    rng = random.Random(seed)
    phase = view["phase"]
    if phase == "passing":
        return "pass", mask_of_names(rng.sample(view["hand"], 3))
    if phase == "moon_choice":
        return "moon", "others_26"
    return "play", parse_card(rng.choice(view["legal"]))


def decision_to_move(decision: Decision) -> Move:
    """The room's form of a bot's ``Decision``; ValueError if it had nothing to do."""
    kind = decision.kind
    if kind == "pass":
        return "pass", mask_of_names(decision.cards)
    if kind == "play" and decision.card is not None:
        return "play", parse_card(decision.card)
    if kind == "moon":
        return "moon", decision.moon
    raise ValueError(f"the bot had nothing to do ({kind})")
