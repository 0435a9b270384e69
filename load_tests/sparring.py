"""The sparring panel's entry point: a seat's view in, a ``Decision`` out, like ``decide``.

The panel is the styles of ``server/core/bots/styles.py`` (``ducker``, ``shooter``,
``blocker``), the information-set tree search of ``walks.py`` at 250 walks (``ismcts``), and
``flat``: the flat race of ``search.py`` as strong played it before the tree walks
(``FLAT_RACE``), strong's former self. None is a level a table can seat: they exist so the
benchmark can measure the levels against play they were not tuned against, which is why they
live here and not in the server. Same contract as ``decide``: the view only, deterministic for
a view and seed.
"""

from __future__ import annotations

import random
from typing import Any

from protocol.cards import card_name, names_of
from server.core.bots.basic import basic_pass
from server.core.bots.decisions import Decision, decide, strict_legal, view_seed
from server.core.bots.knowledge import knowledge_of
from server.core.bots.levels import BotLevel
from server.core.bots.outcome import choose_moon
from server.core.bots.styles import STYLES, style_pass, style_play
from server.core.bots.walks import best_root, walk_roots

# The flat race with strong's settings before the tree walks (docs/bots.md): the opponent
# model's noise and surprise, the exact endgame, the searched pass. No seated level has an
# endgame or noise: the search code for them (``search._search_endgame``, the noisy playouts)
# is reached only through this bot.
FLAT_RACE = BotLevel(
    "flat", "spar:flat", "Flat Race", True, 12000, 24, 160, 64, 12000, 3, 0.15, 0.8, 3
)
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
