"""What a bot decision costs at each level, on one core, as a bot worker makes it.

    nice python -m load_tests.bot_costs [--hands 20] [--levels basic,normal,strong]

Each level plays ``--hands`` whole hands at all four seats (random deals, the first hand of a
game: a pass to the left), every decision through ``server.play.bot_jobs.decide_move`` as a
pool process or a bot worker runs it (the search cut at ``DECISION_SECONDS`` of wall time).
Printed per level: the decisions' mean, median and p99 by kind (pass, play), the mean per
decision, and the CPU a table of one human and three bots of that level asks per hand (39 plays
and 3 passes); ``machine_rules_hands_per_second`` first, to compare machines.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.measures import percentile
from server.core.bots.moves import Move
from server.core.room.game_view import game_view
from server.core.rules import Game, Phase, Rules, deal_from_deck
from server.play.bot_jobs import decide_move, warm_up

BOT_PLAYS_PER_HAND = 39  # three bot seats, 13 cards each
BOT_PASSES_PER_HAND = 3


def waiting_seat(game: Game) -> int:
    hand = game.hand
    assert hand is not None
    if game.phase is Phase.PASSING:
        return next(s for s in range(4) if not hand.passes[s])
    if game.phase is Phase.MOON_CHOICE:
        return game.moon_chooser
    return hand.turn


def apply(game: Game, seat: int, move: Move) -> None:
    kind, arg = move
    if kind == "pass":
        game.pass_cards(seat, arg)
    elif kind == "play":
        game.play(seat, arg)
    else:
        game.choose_moon(seat, arg)


def costs(level: str, hands: int, seed: int) -> dict[str, list[float]]:
    """Seconds of CPU per decision, by kind."""
    rng = random.Random(seed)
    taken: dict[str, list[float]] = {"pass": [], "play": [], "moon": []}
    for h in range(hands):
        deck = list(range(52))
        rng.shuffle(deck)
        game = Game(Rules())
        game.start_hand(deal_from_deck(deck))
        step = 0
        while game.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
            seat = waiting_seat(game)
            view = game_view(game, seat)
            started = time.process_time()
            move = decide_move(view, level, h * 1000 + step)
            taken[move[0]].append(time.process_time() - started)
            apply(game, seat, move)
            step += 1
    return taken


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m load_tests.bot_costs")
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--levels", default="basic,normal,strong")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(machine_speed_line(machine_speed()), flush=True)
    warm_up()
    for level in args.levels.split(","):
        taken = costs(level, args.hands, args.seed)
        every = taken["pass"] + taken["play"] + taken["moon"]
        for kind in ("pass", "play"):
            xs = sorted(taken[kind])
            print(
                f"{level} {kind}: {len(xs)} decisions, mean {statistics.mean(xs) * 1000:.1f} ms, "
                f"median {percentile(xs, 0.5) * 1000:.1f}, p99 {percentile(xs, 0.99) * 1000:.1f}"
            )
        per_hand = BOT_PLAYS_PER_HAND * statistics.mean(taken["play"]) + (
            BOT_PASSES_PER_HAND * statistics.mean(taken["pass"])
        )
        print(f"bot_decision_ms_mean_{level}: {statistics.mean(every) * 1000:.2f}")
        print(f"bot_table_cpu_ms_per_hand_{level}: {per_hand * 1000:.0f}", flush=True)


if __name__ == "__main__":
    main()
