"""Rules-engine speed: random legal full hands (deal, pass, 13 tricks, score) on one core.

    python -m load_tests.bench_rules [--hands N] [--seed S]

Deals are drawn before the clock starts (the engine takes a deal as input; shuffling is the
fair-deal protocol's job, measured by bench_shuffle). The random player picks uniformly among
``legal_plays``; its own cost is counted in the figure, so the engine alone is faster still.
Last line: ``hands_per_second: N``.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from typing import Any

from server.core.rules import Game, Phase, Rules, deal_from_deck

# Card lists for every 13-bit suit pattern, so a random pick from a set is a few lookups.
_SUIT_CARDS: list[list[tuple[int, ...]]] = [
    [tuple(13 * s + r for r in range(13) if m >> r & 1) for m in range(1 << 13)] for s in range(4)
]


def cards_fast(mask: int) -> tuple[int, ...]:
    t = _SUIT_CARDS
    return (
        t[0][mask & 0x1FFF]
        + t[1][mask >> 13 & 0x1FFF]
        + t[2][mask >> 26 & 0x1FFF]
        + t[3][mask >> 39 & 0x1FFF]
    )


def play_hand(game: Game, deal: list[int], rng: random.Random) -> None:
    hand = game.start_hand(deal)
    rand = rng.random
    if game.phase is Phase.PASSING:
        for seat in range(4):
            # Three distinct random cards: a random start and fixed offsets (0, 4, 9 mod 13).
            c = cards_fast(hand.hands[seat])
            i = int(rand() * 13)
            game.pass_cards(seat, (1 << c[i]) | (1 << c[(i + 4) % 13]) | (1 << c[(i + 9) % 13]))
    play, legal = game.play, hand.legal_plays
    t0, t1, t2, t3 = _SUIT_CARDS
    for _ in range(52):
        seat = hand.turn
        mask = legal(seat)
        # Inlined cards_fast: the random player should cost little next to the engine.
        cards = (
            t0[mask & 0x1FFF] + t1[mask >> 13 & 0x1FFF] + t2[mask >> 26 & 0x1FFF] + t3[mask >> 39]
        )
        play(seat, cards[int(rand() * len(cards))])


def random_deals(count: int, rng: random.Random) -> list[list[int]]:
    deals = []
    for _ in range(count):
        deck = list(range(52))
        rng.shuffle(deck)
        deals.append(deal_from_deck(deck))
    return deals


def machine_speed(hands: int = 2000, seed: int = 1) -> float:
    """Hands a second this machine plays on one core, now: a yardstick for comparing figures
    measured on different machines (the load reports print it before their load starts)."""
    rng = random.Random(seed)
    deals = random_deals(hands, rng)
    game = Game(Rules(target=100))
    t0 = time.process_time()
    for deal in deals:
        if game.phase is not Phase.DEAL:
            game = Game(Rules(target=100))
        play_hand(game, deal, rng)
    return hands / (time.process_time() - t0)


def machine_speed_line(speed: float) -> str:
    """The ``machine_rules_hands_per_second`` line every timing benchmark prints beside its own."""
    return (
        f"machine_rules_hands_per_second: {speed:.0f}  (one core, before the load: the "
        "machine's speed, to compare these figures with another machine's)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    deals = random_deals(min(args.hands, 5000), rng)

    # legal_plays alone, on positions taken from real play.
    game = Game(Rules(target=100))
    positions: list[Any] = []
    while len(positions) < 2000:
        if game.phase is Phase.OVER:
            game = Game(Rules(target=100))
        hand = game.start_hand(deals[len(positions) % len(deals)])
        if game.phase is Phase.PASSING:
            for seat in range(4):
                game.pass_cards(
                    seat, sum(1 << c for c in rng.sample(cards_fast(hand.hands[seat]), 3))
                )
        while game.phase is Phase.PLAYING:
            positions.append(hand.copy())
            game.play(hand.turn, rng.choice(cards_fast(hand.legal_plays(hand.turn))))
        if game.phase is Phase.MOON_CHOICE:
            break
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        for pos in positions:
            pos._legal = -1  # measure the computation, not the cache
            pos.legal_plays(pos.turn)
    legal_ns = (time.perf_counter() - t0) / (reps * len(positions)) * 1e9

    # Setup made many long-lived objects (tables, deals, positions); keep the collector off them
    # so the timing is the engine's, as a long-running server would after start-up.
    del positions
    gc.collect()
    gc.freeze()
    rates = []
    done = 0
    for _ in range(5):
        batch = args.hands // 5
        game = Game(Rules(target=100))
        t0 = time.perf_counter()
        for i in range(batch):
            if game.phase is not Phase.DEAL:
                game = Game(Rules(target=100))
            play_hand(game, deals[i % len(deals)], rng)
        rates.append(batch / (time.perf_counter() - t0))
        done += batch
    print(f"hands played: {done} in 5 batches")
    print(f"legal_plays_ns: {legal_ns:.0f}")
    print(f"hands_per_second_batches: {' '.join(f'{r:.0f}' for r in rates)}")
    print(f"hands_per_second: {statistics.median(rates):.0f}")


if __name__ == "__main__":
    main()
