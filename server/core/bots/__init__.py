"""Bots that play Hearts from a seat's view, and explain their cards.

    from server.core.bots import decide, hint, BOT_LEVELS
    decide(game_view(game, seat), "strong", rng_seed=7)   # Decision(kind="play", cards=("QS",))
    hint(game_view(game, seat)).to_dict()                 # card, reason, alternatives

Pure code: no I/O, no clock, no state between calls. See docs/bots.md.
"""

from .decisions import Decision, Hint, decide, hint
from .levels import BOT_LEVELS, DEFAULT_LEVEL, BotLevel, bot_level

__all__ = [
    "BOT_LEVELS",
    "DEFAULT_LEVEL",
    "BotLevel",
    "Decision",
    "Hint",
    "bot_level",
    "decide",
    "hint",
]
