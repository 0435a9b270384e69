"""Bot strength and speed: duplicate deals with seat rotation.

    python -m load_tests.bench_bots --deals N [--a strong --b basic] [--workers 2]

Each deal (a shuffled deck) is played four times, the tested bot (``--a``) in each seat in turn
and the field bot (``--b``) in the other three, so every bot gets the same cards in every seat
and luck cancels out. The deals are played in order as the hands of games to ``--target``
(50 by default, quick play): a game ends when a score reaches the target and the next deal
starts a new one (a new game also starts every ``--segment`` deals, the unit of work sent to the
process pool; a game cut short by that is not counted as a game).

Reported per comparison: mean points per hand ± standard error (over deals, each deal's value
being the mean of its four rotations), the field's mean, their ratio, the game win rate of the
tested bot (over completed games; a win shared by k tied seats counts 1/k; a fair share is 0.25),
the ratio over the hands that could not end the game (points alone at stake), moons shot by the
tested bot and by the field, moons stopped (a field seat had taken every point so far, at least
16 of them, after five tricks or more, then the tested bot took a point card and the moon
failed), who took the queen of spades and hands of 16+ points without a moon, and the tested
bot's decision time (every decision it was asked for, and the searched ones alone: not a single
legal card).

Without ``--a``/``--b`` the rows are ``--rows`` (strong) and the columns ``--cols`` (the whole
panel); it ends with a cross table, ``playout_cards_per_second``, ``strong_ratio_vs_<opponent>``
and ``strong_worst_ratio`` (strong's highest ratio over its opponents). Where strong is tested
it also prints ``strong_decision_cpu_ms_mean`` (the CPU time of every decision strong made:
passes, plays, a single legal card; each cell's report has the plays' and the passes' means
apart) with ``machine_rules_hands_per_second`` (measured before the games) beside it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.bots_summary import (
    HEAVY,
    RUN_POINTS,
    RUN_TRICKS,
    SEARCHERS,
    Summary,
    cross_table,
    mean_se,
    paired,
    pct,
    ratio_and_se,
    report,
)
from load_tests.sparring import SPARRING, spar
from protocol.cards import cards_in, mask_of_names, parse_card
from server.core.bots import decide
from server.core.bots.playout import play_out
from server.core.room.game_view import game_view
from server.core.rules import (
    POINT_CARDS,
    Game,
    Hand,
    PassDirection,
    Phase,
    Rules,
    deal_from_deck,
    points_in,
)

PLAYERS = ("random", "basic", "ducker", "shooter", "blocker", "ismcts", "normal", "strong", "flat")
PANEL = ("random", "basic", "ducker", "shooter", "blocker", "ismcts", "normal")


def deck_for(seed: int, index: int) -> list[int]:
    deck = list(range(52))
    random.Random(f"{seed}:{index}").shuffle(deck)
    return deck


@dataclass
class SegmentResult:
    rotation: int
    first_deal: int
    tested_points: list[int] = field(default_factory=list)  # per deal, in order
    field_points: list[float] = field(default_factory=list)
    wins: list[float] = field(default_factory=list)  # per completed game: tested win share
    moons_tested: int = 0
    moons_field: int = 0
    threats: int = 0
    stopped: int = 0
    queens_tested: int = 0  # hands in which the tested seat took the queen of spades
    queens_field: int = 0  # ... and a field seat did
    heavy_tested: int = 0  # hands without a moon in which the tested seat took HEAVY+ points
    heavy_field: int = 0  # ... and field seats did (a failed moon run usually ends so)
    # Hands that cannot end the game (every score + 26 short of the target), where the bots
    # play for the hand's points alone: (tested points, field mean) per hand.
    open_hands: list[tuple[int, float]] = field(default_factory=list)
    # Every hand by its pass direction (PassDirection's value): (tested points, field mean).
    directed: list[tuple[int, int, float]] = field(default_factory=list)
    decision_s: list[float] = field(default_factory=list)  # wall clock, every decision
    searched_s: list[float] = field(default_factory=list)  # wall clock, searched decisions
    decision_cpu_s: list[float] = field(default_factory=list)  # this thread's CPU time
    pass_cpu_s: list[float] = field(default_factory=list)  # ... of the passes alone


def random_move(game: Game, seat: int, rng: random.Random) -> None:
    """The random-legal bot: any card the standard rules allow, any three cards to pass."""
    phase = game.phase
    if phase is Phase.PASSING:
        picked = rng.sample(cards_in(game.hand.hands[seat]), 3)  # type: ignore[union-attr]
        game.pass_cards(seat, (1 << picked[0]) | (1 << picked[1]) | (1 << picked[2]))
    elif phase is Phase.PLAYING:
        game.play(seat, rng.choice(cards_in(game.legal_plays(seat))))
    elif phase is Phase.MOON_CHOICE:
        game.choose_moon(seat, "others_26")


def bot_move(game: Game, seat: int, level: str, seed: int) -> tuple[float, float, bool]:
    """Ask the bot with the seat's view only; returns its think time (wall clock and CPU) and
    whether it searched."""
    view = game_view(game, seat)
    forced = game.phase is Phase.PLAYING and len(view["legal"]) == 1
    c0 = time.thread_time()
    t0 = time.perf_counter()
    d = spar(view, level, seed) if level in SPARRING else decide(view, level, rng_seed=seed)
    took = time.perf_counter() - t0
    cpu = time.thread_time() - c0
    if d.kind == "pass":
        game.pass_cards(seat, mask_of_names(d.cards))
    elif d.kind == "play":
        game.play(seat, parse_card(d.cards[0]))
    elif d.kind == "moon":
        game.choose_moon(seat, d.moon)  # type: ignore[arg-type]
    else:
        raise RuntimeError(f"bot {level} at seat {seat} had nothing to do in {game.phase}")
    return took, cpu, not forced and level in SEARCHERS


def waiting_seat(game: Game) -> int:
    if game.phase is Phase.PASSING:
        return next(s for s in range(4) if not game.hand.passes[s])  # type: ignore[union-attr]
    if game.phase is Phase.MOON_CHOICE:
        return game.moon_chooser
    return game.hand.turn  # type: ignore[union-attr]


def run_segment(task: tuple[str, str, int, int, int, int, int]) -> SegmentResult:
    tested, fielded, rotation, first, count, seed, target = task
    out = SegmentResult(rotation, first)
    rng = random.Random(f"moves:{seed}:{first}:{rotation}:{tested}:{fielded}")
    levels = [fielded] * 4
    levels[rotation] = tested
    game = Game(Rules(target=target))
    for i in range(first, first + count):
        if game.phase is Phase.OVER:
            game = Game(Rules(target=target))
        can_end = max(game.scores) + 26 >= target
        game.start_hand(deal_from_deck(deck_for(seed, i)))
        hand = game.hand
        assert hand is not None
        threat = -1
        tested_taken_at_threat = 0
        decision = 0
        while game.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
            seat = waiting_seat(game)
            tricks_before = len(hand.tricks)
            if levels[seat] == "random":
                random_move(game, seat, rng)
            else:
                decision += 1
                move_seed = seed * 7919 + i * 131 + decision
                passing = game.phase is Phase.PASSING
                took, cpu, searched = bot_move(game, seat, levels[seat], move_seed)
                if seat == rotation:
                    out.decision_s.append(took)
                    out.decision_cpu_s.append(cpu)
                    if passing:
                        out.pass_cpu_s.append(cpu)
                    if searched:
                        out.searched_s.append(took)
            if threat < 0 and len(hand.tricks) > tricks_before:
                holders = [s for s in range(4) if hand.taken[s] & POINT_CARDS]
                if (
                    len(holders) == 1
                    and holders[0] != rotation
                    and len(hand.tricks) >= RUN_TRICKS
                    and points_in(hand.taken[holders[0]]) >= RUN_POINTS
                ):
                    threat = holders[0]
                    tested_taken_at_threat = hand.taken[rotation] & POINT_CARDS
        points = game.history[-1]
        out.tested_points.append(points[rotation])
        out.field_points.append(sum(points[s] for s in range(4) if s != rotation) / 3)
        if not can_end:
            out.open_hands.append((out.tested_points[-1], out.field_points[-1]))
        out.directed.append((int(hand.direction), out.tested_points[-1], out.field_points[-1]))
        shooter = hand.shooter()
        if shooter is None:
            queen = next(s for s in range(4) if hand.taken[s] >> 36 & 1)
            out.queens_tested += queen == rotation
            out.queens_field += queen != rotation
            heavy = [points_in(t) >= HEAVY for t in hand.taken]
            out.heavy_tested += heavy[rotation]
            out.heavy_field += sum(heavy) - heavy[rotation]
        if shooter == rotation:
            out.moons_tested += 1
        elif shooter is not None:
            out.moons_field += 1
        if threat >= 0:
            out.threats += 1
            if shooter is None and hand.taken[rotation] & POINT_CARDS & ~tested_taken_at_threat:
                out.stopped += 1
        if game.phase is Phase.OVER:
            out.wins.append(1.0 / len(game.winners) if rotation in game.winners else 0.0)
    return out


def compare(
    tested: str,
    fielded: str,
    deals: int,
    seed: int,
    target: int,
    segment: int,
    workers: int,
    progress: Callable[[str], None],
    seconds: float = 0.0,
) -> Summary:
    """``tested`` among three ``fielded`` on ``deals`` duplicate deals. With ``seconds``, no new
    segment starts after that long, and only the deals all four rotations finished count."""
    tasks = [
        (tested, fielded, rotation, first, min(segment, deals - first), seed, target)
        for first in range(0, deals, segment)
        for rotation in range(4)
    ]
    t0 = time.perf_counter()
    results: list[SegmentResult] = []
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        # imap (in order) with the rotations of a deal next to each other: when the time is up,
        # the segments done are the first ones, each with its four rotations.
        for done, r in enumerate(pool.imap(run_segment, tasks), 1):
            results.append(r)
            if done % max(1, len(tasks) // 10) == 0:
                progress(f"  {tested} vs {fielded}: {done}/{len(tasks)} segments")
            if seconds and time.perf_counter() - t0 > seconds and done % 4 == 0:
                pool.terminate()
                break
    wall = time.perf_counter() - t0
    rotations: dict[int, int] = {}
    for r in results:
        rotations[r.first_deal] = rotations.get(r.first_deal, 0) + 1
    results = [r for r in results if rotations[r.first_deal] == 4]
    deals = sum(len(r.tested_points) for r in results) // 4
    per_deal_tested = [0.0] * deals
    per_deal_field = [0.0] * deals
    wins: list[float] = []
    times: list[float] = []
    searched: list[float] = []
    cpu: list[float] = []
    pass_cpu: list[float] = []
    open_hands: list[tuple[int, float]] = []
    directed: list[tuple[int, int, float]] = []
    totals = dict.fromkeys(
        (
            "moons_tested", "moons_field", "threats", "stopped", "queens_tested", "queens_field",
            "heavy_tested", "heavy_field",
        ),
        0,
    )  # fmt: skip
    for r in results:
        for j, p in enumerate(r.tested_points):
            per_deal_tested[r.first_deal + j] += p / 4
            per_deal_field[r.first_deal + j] += r.field_points[j] / 4
        wins.extend(r.wins)
        times.extend(r.decision_s)
        searched.extend(r.searched_s)
        cpu.extend(r.decision_cpu_s)
        pass_cpu.extend(r.pass_cpu_s)
        open_hands.extend(r.open_hands)
        directed.extend(r.directed)
        for key in totals:
            totals[key] += getattr(r, key)
    tm, tse = mean_se(per_deal_tested)
    fm, fse = mean_se(per_deal_field)
    _, dse = mean_se([a - b for a, b in zip(per_deal_tested, per_deal_field, strict=True)])
    ratio, ratio_se = ratio_and_se(per_deal_tested, per_deal_field)
    wr, wse = mean_se(wins)
    # Not paired: the four rotations of a deal reach it at different scores.
    open_ratio, open_se = ratio_and_se(
        [float(t) for t, _ in open_hands], [f for _, f in open_hands]
    )
    out = Summary(
        tested, fielded, deals, tm, tse, fm, fse, dse, ratio, ratio_se, wr, wse, len(wins),
        totals["moons_tested"], totals["moons_field"], totals["threats"], totals["stopped"],
        totals["queens_tested"], totals["queens_field"], totals["heavy_tested"],
        totals["heavy_field"], len(open_hands), open_ratio, open_se,
        pct(times, 0.5), pct(times, 0.99), pct(times, 1.0),
        pct(searched, 0.5), pct(searched, 0.99), pct(cpu, 0.5), pct(cpu, 0.99), len(times),
        wall,
    )  # fmt: skip
    out.per_deal_tested, out.per_deal_field = per_deal_tested, per_deal_field
    ms = 1000.0
    out.cpu_mean = ms * statistics.fmean(cpu) if cpu else 0.0
    out.cpu_pass_mean = ms * statistics.fmean(pass_cpu) if pass_cpu else 0.0
    plays = len(cpu) - len(pass_cpu)  # (a moon choice, rare and free, counts with the plays)
    out.cpu_play_mean = ms * (sum(cpu) - sum(pass_cpu)) / plays if plays else 0.0
    for d in PassDirection:  # hands, not deals, as for the open hands
        tested_pts = [float(t) for k, t, _ in directed if k == d]
        field_pts = [f for k, _, f in directed if k == d]
        ratio_d, se_d = ratio_and_se(tested_pts, field_pts)
        out.by_direction[d.name.lower()] = (len(tested_pts), ratio_d, se_d)
    return out


def playout_cards_per_second(deals: int = 400, seed: int = 11) -> float:
    """Card plays per CPU second in the search's playouts (the policy for all four seats, through
    the rules engine), from the first trick of fresh deals."""
    starts = [
        Hand.deal(deal_from_deck(deck_for(seed, i)), PassDirection.NONE) for i in range(deals)
    ]
    cards = 0
    c0 = time.process_time()
    for base in starts:
        cards += play_out(base)[1]
    return cards / max(1e-9, time.process_time() - c0)


def _names(text: str) -> list[str]:
    names = [n for n in text.split(",") if n]
    for n in names:
        if n not in PLAYERS:
            raise SystemExit(f"unknown player {n!r}; one of {', '.join(PLAYERS)}")
    return names


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per cell")
    parser.add_argument(
        "--seconds", type=float, default=0.0,
        help="per cell: start no new segment after this long (0: no bound); only deals all "
        "four rotations finished count, and the deal count is printed",
    )  # fmt: skip
    parser.add_argument("--rows", default="strong", help="tested bots, comma-separated")
    parser.add_argument("--cols", default=",".join(PANEL), help="field bots, comma-separated")
    parser.add_argument("--full", action="store_true", help="every player against every other")
    parser.add_argument("--a", default=None, help="one comparison: the tested bot ...")
    parser.add_argument("--b", default=None, help="... among three of this one")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target", type=int, default=50, choices=(50, 100))
    parser.add_argument("--segment", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--save", default=None, help="write each cell's per-deal points to this JSON file"
    )
    parser.add_argument(
        "--paired", default=None,
        help="a file --save wrote (same --seed): print each cell's ratio minus that run's on the "
        "same deals, with the paired standard error",
    )  # fmt: skip
    args = parser.parse_args(argv)
    speed = machine_speed()  # before the load, as every timing benchmark
    if args.a or args.b:
        pairs = [(args.a or "strong", args.b or "basic")]
    elif args.full:
        pairs = [(a, b) for a in PLAYERS for b in PLAYERS if a != b]
    else:
        pairs = [(a, b) for a in _names(args.rows) for b in _names(args.cols) if a != b]

    def progress(msg: str) -> None:
        print(msg, flush=True)

    summaries: list[Summary] = []
    for tested, fielded in pairs:
        s = compare(
            tested, fielded, args.deals, args.seed, args.target, args.segment, args.workers,
            progress, args.seconds,
        )  # fmt: skip
        summaries.append(s)
        print("\n".join(report(s)), flush=True)
    print("\n".join(cross_table(summaries)))
    cells = {
        f"{s.tested}:{s.fielded}": {"tested": s.per_deal_tested, "field": s.per_deal_field}
        for s in summaries
    }
    if args.save:
        with open(args.save, "w") as f:
            json.dump({"seed": args.seed, "cells": cells}, f)
    if args.paired:
        with open(args.paired) as f:
            base = json.load(f)
        if base["seed"] != args.seed:
            raise SystemExit(f"{args.paired} was played with seed {base['seed']}, not {args.seed}")
        for key, now in cells.items():
            if key in base["cells"]:
                b = base["cells"][key]
                diff, se, unpaired, n = paired(now["tested"], now["field"], b["tested"], b["field"])
                print(
                    f"paired_{key.replace(':', '_vs_')}: {diff:+.3f} ± {se:.3f} over {n} deals "
                    f"(this run minus {args.paired}; unpaired SE {unpaired:.3f})"
                )
    strong = [s for s in summaries if s.tested == "strong" and s.fielded != "strong"]
    print(f"playout_cards_per_second: {playout_cards_per_second():.0f}")
    for s in strong:
        print(f"strong_ratio_vs_{s.fielded}: {s.ratio:.3f} ± {s.ratio_se:.3f} ({s.deals} deals)")
    if strong:
        t = [s for s in strong if s.tested in SEARCHERS]
        if t:
            print(f"strong_decision_ms_median: {statistics.median(x.ms_median for x in t):.1f}")
            print(f"strong_decision_ms_p99: {max(x.ms_p99 for x in t):.1f}")
            # CPU time of every decision strong made (passes, plays, a single legal card),
            # the cells weighed by their decisions.
            cpu_ms = sum(x.cpu_mean * x.decisions for x in t) / max(1, sum(x.decisions for x in t))
            print(f"strong_decision_cpu_ms_mean: {cpu_ms:.2f}")
            print(machine_speed_line(speed))
        worst = max(strong, key=lambda s: s.ratio)
        print(f"strong_worst_ratio: {worst.ratio:.3f}")
    else:
        last = summaries[-1]
        print(f"{last.tested}_points_per_hand: {last.tested_mean:.3f}")


if __name__ == "__main__":
    main()
