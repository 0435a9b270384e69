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

from server.core.bots.basic import basic_pass
from server.core.bots.knowledge import QUEEN_BIT
from server.core.rules import Hand, PassDirection

DIRECTIONS = (PassDirection.LEFT, PassDirection.ACROSS, PassDirection.RIGHT)


def passer_holds_queen(
    direction: PassDirection, deals: int, rng: random.Random
) -> tuple[float, int]:
    """The share of the counted deals where the passer to seat 0 holds the queen after the
    pass, and how many deals counted. The rules engine makes the exchange."""
    passer = (0 - direction) & 3
    held = counted = 0
    for _ in range(deals):
        deck = list(range(52))
        rng.shuffle(deck)
        hand = Hand.deal(
            [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)], direction
        )
        for s in range(4):
            hand.choose_pass(s, basic_pass(hand.hands[s]))
        if hand.hands[0] & QUEEN_BIT or hand.received(0) & QUEEN_BIT:
            continue
        counted += 1
        held += bool(hand.hands[passer] & QUEEN_BIT)
    return held / counted, counted


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=40000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    worst = 0.0
    for direction in DIRECTIONS:
        share, counted = passer_holds_queen(direction, args.deals, rng)
        name = direction.name.lower()
        print(f"passing {name}: the passer holds her in {share:.3f} of {counted} deals")
        worst = max(worst, abs(share - 1 / 3))
    print(f"pass_queen_signal: {worst:.3f}")  # the largest distance from a third


if __name__ == "__main__":
    main()
