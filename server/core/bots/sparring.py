"""The sparring panel's entry point: a seat's view in, a ``Decision`` out, like ``decide``.

The panel is the styles of ``styles.py`` (``ducker``, ``shooter``, ``blocker``) and the
information-set tree search of ``walks.py`` at 250 walks (``ismcts``), and ``flat``: the flat
race of ``search.py`` as strong played it until round 12 (``levels.FLAT_RACE``), strong's former
self. They are not levels a table can seat: they exist so the benchmark can measure the levels
against play they were not tuned against. Same contract as ``decide``: the view only,
deterministic for a view and seed.
"""

from __future__ import annotations

import random
from typing import Any

from protocol.cards import card_name, names_of

from .basic import basic_pass
from .decisions import Decision, decide, strict_legal, view_seed
from .knowledge import knowledge_of
from .levels import FLAT_RACE
from .outcome import choose_moon
from .styles import STYLES, style_pass, style_play
from .walks import best_root, walk_roots

ISMCTS_ITERATIONS = 250  # tree walks per decision (about the basic-to-normal range of time)
SPARRING = (*STYLES, "ismcts", "flat")


def spar(view: dict[str, Any], style: str, rng_seed: int | None = None) -> Decision:
    """What the sparring ``style`` at ``view["seat"]`` sends now."""
    if style not in SPARRING:
        raise ValueError(f"unknown sparring style {style!r}; one of {SPARRING}")
    if style == "flat":
        return decide(view, FLAT_RACE, rng_seed)
    k = knowledge_of(view)
    ident = f"spar:{style}"
    me = k.seat
    if k.phase == "moon_choice" and k.moon_chooser == me:
        return Decision("moon", moon=choose_moon(me, k.scores, k.rules), bot=ident)
    if k.phase == "passing" and k.direction and not k.passes_done[me] and not k.passed:
        cards = basic_pass(k.hand) if style == "ismcts" else style_pass(style, k.hand)
        return Decision("pass", tuple(names_of(cards)), bot=ident)
    if k.phase == "playing" and k.turn == me:
        legal = strict_legal(k)
        if not legal & (legal - 1):
            card = legal.bit_length() - 1
        elif style == "ismcts":
            rng = random.Random(view_seed(view) if rng_seed is None else rng_seed)
            card = best_root(walk_roots(k, legal, ISMCTS_ITERATIONS, rng.getrandbits(64))).card
        else:
            card = style_play(style, k, legal)
        return Decision("play", (card_name(card),), bot=ident)
    return Decision("wait", bot=ident)
