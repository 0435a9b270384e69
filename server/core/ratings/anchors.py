"""Bot levels are anchors: each plays at a fixed, calibrated rating that games never move.

Why fixed rather than "moving only against humans": a bot level is a program whose strength
does not change, so there is nothing for its games to learn about it once it is calibrated.
A bot rating that moved would drift with the human pool (everyone it beats pushes it up),
would let a player farm it (lose to it on purpose, then beat it), and would make every posting
of a bot table contend for one hot record. A fixed anchor instead pins the scale: 1500 against
the normal bot means the same thing next year as today.

The values come from a round-robin of the levels rated with the service's own TrueSkill
(``load_tests.calibrate_bots``; ``LEVEL_RATINGS`` in server/core/bots/levels.py, the one place they
are written). sigma is floored at 1: a calibrated bot's strength is well known, yet a result
against a bot should move a player slightly less than one against an equally certain human.
"""

from __future__ import annotations

from protocol.messages import BOT_LEVELS
from server.core.bots.levels import LEVEL_RATINGS
from server.core.ratings.core import MU, SIGMA, Rating

ANCHOR_SIGMA_FLOOR = 1.0

BOT_ANCHORS: dict[str, Rating] = {
    level: Rating(mu=mu, sigma=max(sigma, ANCHOR_SIGMA_FLOOR))
    for level, (mu, sigma) in LEVEL_RATINGS.items()
    if level in BOT_LEVELS and level != "random"
}
"""Bot level (that a table can seat) → its fixed rating, shown as round(1500 + 24*(mu - 25))."""

UNCALIBRATED = Rating(MU, SIGMA)
"""A level missing from the table: as uncertain as a newcomer, so it moves players little."""


def anchor_rating(level: str) -> Rating:
    return BOT_ANCHORS.get(level, UNCALIBRATED)
