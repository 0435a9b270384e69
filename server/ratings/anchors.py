"""Bot levels are anchors: each plays at a fixed, calibrated rating that games never move.

Why fixed rather than "moving only against humans": a bot level is a program whose strength
does not change, so there is nothing for its games to learn about it once it is calibrated.
A bot rating that moved would drift with the human pool (everyone it beats pushes it up),
would let a player farm it (lose to it on purpose, then beat it), and would make every posting
of a bot table contend for one hot record. A fixed anchor instead pins the scale: 1500 against
the normal bot means the same thing next year as today.

The values below are a first estimate from ``load_tests.bench_bots`` (strong wins 60 % of games
to 50 among three basic bots, normal about 50 %), read through the pairwise model. Replace them
with calibrated values when those exist: this table is the only place to change. sigma is
small because a calibrated bot's strength is well known; it still widens the comparison a
little, so a result against a bot moves a player slightly less than one against an equally
certain human.
"""

from __future__ import annotations

from server.ratings.core import MU, SIGMA, Rating

BOT_ANCHORS: dict[str, Rating] = {
    "basic": Rating(mu=22.0, sigma=1.0),
    "normal": Rating(mu=25.5, sigma=1.0),
    "strong": Rating(mu=26.5, sigma=1.0),
}
"""Bot level → its fixed rating. Displayed as round(1500 + 24*(mu - 25)): 1428, 1512, 1536."""

UNCALIBRATED = Rating(MU, SIGMA)
"""A level missing from the table: as uncertain as a newcomer, so it moves players little."""


def anchor_rating(level: str) -> Rating:
    return BOT_ANCHORS.get(level, UNCALIBRATED)
