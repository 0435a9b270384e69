"""Does a pass without the queen of spades say where she is? (docs/bots.md, round 14)

Every seat passes like the basic bot, which always passes an unguarded queen. For each pass
direction, over random deals where seat 0 neither holds her after the pass nor was passed her,
how often the seat that passed to seat 0 holds her: a third means the pass tells nothing and a
search has nothing to weigh its deals by.

    python -m load_tests.pass_inference [--deals 40000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random

from server.bots.basic import basic_pass
from server.bots.knowledge import QUEEN_BIT

DIRECTIONS = {"left": 1, "across": 2, "right": 3}


def passer_holds_queen(offset: int, deals: int, rng: random.Random) -> tuple[float, int]:
    """The share of the counted deals where the passer to seat 0 holds the queen after the
    pass, and how many deals counted."""
    passer = (0 - offset) & 3
    held = counted = 0
    for _ in range(deals):
        deck = list(range(52))
        rng.shuffle(deck)
        hands = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
        passes = [basic_pass(h) for h in hands]
        after = [hands[s] & ~passes[s] | passes[(s - offset) & 3] for s in range(4)]
        if after[0] & QUEEN_BIT or passes[passer] & QUEEN_BIT:
            continue
        counted += 1
        held += bool(after[passer] & QUEEN_BIT)
    return held / counted, counted


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=40000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    worst = 0.0
    for name, offset in DIRECTIONS.items():
        share, counted = passer_holds_queen(offset, args.deals, rng)
        print(f"passing {name}: the passer holds her in {share:.3f} of {counted} deals")
        worst = max(worst, abs(share - 1 / 3))
    print(f"pass_queen_signal: {worst:.3f}")  # the largest distance from a third


if __name__ == "__main__":
    main()
