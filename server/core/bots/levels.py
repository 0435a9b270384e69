"""The bot levels: each a named identity (ratings are kept per level) and a thinking budget.

Budgets count simulated card plays and deals, never seconds, so a decision is the same on a
fast or a slow machine and the same every time for a given seed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BotLevel:
    level: str  # "basic", "normal", "strong"
    id: str  # stable identity, e.g. "bot:strong"; ratings hang off it
    name: str  # shown at the table, e.g. "Strong Bot"
    search: bool  # False: the rule-based bot alone
    play_budget: int  # simulated card plays per decision, shared among the candidate cards
    min_worlds: int  # sampled deals per candidate card, at least ...
    max_worlds: int  # ... and at most
    pass_worlds: int  # sampled deals the pass search may try a candidate on, at most
    pass_budget: int  # simulated card plays for the whole pass search
    inference_pool: int  # deals sampled per deal kept, to keep those that explain the play
    # The opponent model: the chance, at each of another seat's choices in a playout, that it
    # plays a random legal card rather than the policy's; and how much less likely a sampled
    # deal is for each of the others' plays the policy would not have made there.
    noise: float = 0.0
    surprise: float = 0.25
    # The end of the hand: with this many cards or fewer left in the seat's hand, each sampled
    # deal is solved exactly (every seat playing its best with every hand known) instead of
    # played out by the policy, on at most ``endgame_worlds`` deals. 0: never.
    endgame: int = 0
    endgame_worlds: int = 48
    # Plays searched by information-set tree walks (``walks.py``), this many a decision, in
    # place of the flat race, and the pass chosen like basic's (or priced: below); 0: the
    # flat race for both.
    walks: int = 0
    # With walks: the pass priced by them (``priced_pass.py``: basic's most passable cards, each
    # three played out over draws of what the pass brings) instead of basic's pass.
    priced_pass: bool = False


BOT_LEVELS: dict[str, BotLevel] = {
    "basic": BotLevel("basic", "bot:basic", "Basic Bot", False, 0, 0, 0, 0, 0, 1),
    "normal": BotLevel("normal", "bot:normal", "Normal Bot", True, 3000, 16, 32, 24, 4000, 2),
    # strong plays by tree walks (``walks``) and prices basic's passes by them: no flat-race
    # budget.
    "strong": BotLevel(
        "strong", "bot:strong", "Strong Bot", True, 0, 0, 0, 0, 0, 1, walks=60000, priced_pass=True
    ),
}
DEFAULT_LEVEL = "strong"


def bot_level(level: str) -> BotLevel:
    try:
        return BOT_LEVELS[level]
    except KeyError:
        raise ValueError(f"unknown bot level {level!r}; one of {sorted(BOT_LEVELS)}") from None


# Each level's TrueSkill rating (mu, sigma) on the service's scale (server/core/ratings/core.py),
# from a round-robin of the levels: `python -m load_tests.calibrate_bots` (docs/bots.md has the
# run). These are the bots' anchor ratings for the ladder to read; "random" is the server's
# random-legal fallback level. Plain numbers: the ratings code imports this module, not the
# reverse.
LEVEL_RATINGS: dict[str, tuple[float, float]] = {
    "random": (17.77, 0.84),
    "basic": (29.20, 0.63),
    "normal": (29.92, 0.63),
    "strong": (31.40, 0.64),
}
