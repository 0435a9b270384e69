"""Bot levels as rating anchors: a round-robin of the levels, rated with the service's TrueSkill.

    python -m load_tests.calibrate_bots --games N [--seconds S] [--workers 2]

Every game seats one bot of each level (random, basic, normal, strong) and is played to 50,
the quick-play target; the seats rotate through all 24 orders, so no level keeps a seat. Each
game is rated with ``server.core.ratings.core.rate_game``, the call a rated game makes, in game
order, from the new-player prior for every level. Printed: each level's mu, sigma and displayed
rating,
the mean final score and win share, then the ``LEVEL_RATINGS`` dict for
``server/core/bots/levels.py``, and last ``strong_display_rating``.

The scale's centre comes from the prior: TrueSkill keeps the levels' mean mu near 25, the mu of a
new player, so a new player starts level with the average of the four bots.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import random
import statistics
import time

from load_tests.bench_bots import bot_move, deck_for, random_move, waiting_seat
from server.core.ratings.core import Rating, display_rating, new_rating, rate_game
from server.core.rules import Game, Phase, Rules, deal_from_deck

LEVELS = ("random", "basic", "normal", "strong")
ORDERS = list(itertools.permutations(range(len(LEVELS))))


def play_game(task: tuple[int, int, int]) -> tuple[int, list[int]]:
    """Game ``index``: the levels seated in order ``ORDERS[index % 24]``; returns each level's
    final score (by level, not by seat)."""
    index, seed, target = task
    order = ORDERS[index % len(ORDERS)]  # order[seat] = the level's index
    rng = random.Random(f"calibrate:{seed}:{index}")
    game = Game(Rules(target=target))
    deal = 0
    while game.phase is not Phase.OVER:
        game.start_hand(deal_from_deck(deck_for(seed, index * 1000 + deal)))
        deal += 1
        step = 0
        while game.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
            seat = waiting_seat(game)
            level = LEVELS[order[seat]]
            step += 1
            if level == "random":
                random_move(game, seat, rng)
            else:
                bot_move(game, seat, level, seed * 7919 + index * 1009 + deal * 131 + step)
    by_level = [0] * len(LEVELS)
    for seat, lv in enumerate(order):
        by_level[lv] = game.scores[seat]
    return index, by_level


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=240)
    parser.add_argument("--seconds", type=float, default=0.0, help="start no game after this")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target", type=int, default=50, choices=(50, 100))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    finished: dict[int, list[int]] = {}
    tasks = [(i, args.seed, args.target) for i in range(args.games)]
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        for i, scores in pool.imap(play_game, tasks):
            finished[i] = scores
            if args.seconds and time.perf_counter() - t0 > args.seconds:
                pool.terminate()
                break
    games = [finished[i] for i in sorted(finished)]
    ratings: list[Rating] = [new_rating() for _ in LEVELS]
    for scores in games:
        ratings = rate_game(ratings, scores, [False] * len(LEVELS))
    wins = [0.0] * len(LEVELS)
    for scores in games:
        low = min(scores)
        winners = [i for i, s in enumerate(scores) if s == low]
        for i in winners:
            wins[i] += 1 / len(winners)
    n = len(games)
    print(f"{n} games to {args.target}, every level in every game, seats rotated "
          f"({time.perf_counter() - t0:.0f} s)")  # fmt: skip
    print("level     mu      sigma  display  mean final score  win share")
    for i, lv in enumerate(LEVELS):
        r = ratings[i]
        mean = statistics.fmean(g[i] for g in games) if games else 0.0
        print(
            f"{lv:<8} {r.mu:7.2f} {r.sigma:7.2f} {display_rating(r):8d} {mean:17.1f}"
            f" {wins[i] / max(1, n):10.3f}"
        )
    print("LEVEL_RATINGS = {")
    for i, lv in enumerate(LEVELS):
        print(f'    "{lv}": ({ratings[i].mu:.2f}, {ratings[i].sigma:.2f}),')
    print("}")
    print(f"strong_display_rating: {display_rating(ratings[LEVELS.index('strong')])}")


if __name__ == "__main__":
    main()
