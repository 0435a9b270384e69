"""How long a paced player thinks before each decision: lognormal, with a floor and a cap.

People take a few seconds to choose a pass and a second or two per card, with a long right
tail (lognormal, the usual shape of human reaction and decision times). The floor is the
fastest a person moves; the cap keeps every decision inside the server's default grace
(5 s for a play, 10 s for a pass), so a paced table never spends its time bank: what the load
measures is the server, not clocks running out. ``factor`` scales every time for quick runs.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pause:
    """Seconds: ``median · e^(sigma · N(0, 1))``, clamped to [floor, cap]."""

    median: float
    sigma: float
    floor: float
    cap: float

    def draw(self, rng: random.Random) -> float:
        value = rng.lognormvariate(math.log(self.median), self.sigma)
        return min(self.cap, max(self.floor, value))


PASS = Pause(median=4.0, sigma=0.4, floor=1.5, cap=8.0)
PLAY = Pause(median=1.3, sigma=0.5, floor=0.4, cap=4.0)
MOON = Pause(median=2.0, sigma=0.4, floor=0.8, cap=6.0)
REMATCH = Pause(median=3.0, sigma=0.4, floor=1.0, cap=8.0)
SERVER_BETWEEN_HANDS = 2.0  # the server's default pause between hands, scaled with the players


class Thinking:
    """One player's think times, from its own seeded generator."""

    def __init__(self, factor: float, seed: int) -> None:
        self.factor = factor
        self.rng = random.Random(seed)

    def pause(self, phase: str) -> float:
        kind = {"passing": PASS, "playing": PLAY, "moon_choice": MOON}.get(phase, REMATCH)
        return self.factor * kind.draw(self.rng)

    def rematch(self) -> float:
        return self.factor * REMATCH.draw(self.rng)
