"""The others' suit lengths read from their play: simulated, then checked.

    python -m load_tests.play_lengths [--hands 4000] [--seed 5] [--workers 2] [--write]

The walks deal the hidden cards uniformly among what fits the play (voids shown), weighed by
the pass (``pass_prior``) and the queen's free dumps (``worlds.queen_doubt``). A seat's leads and
discards say more: a seat that has shed two diamonds is likely short of them, one that leads
clubs twice likely long. Here hands are played by a mixed field, each seat one of ``PANEL`` drawn
per hand, and at sampled decisions of every seat the table counts, for each other seat and
suit, keyed by ``Key`` (whether the hand had a pass, how far the hand is, the suit, how often
the seat led it and shed it), the seat's true length of the suit now against the length in the
walks' own weighed deals. The ratio of the two, shrunk toward 1, is a weight a length
(``play_table.py``, which ``pass_prior`` multiplies into the pass's weights); ``--write``
rewrites it.

Then the check, on fresh hands (``--check-field`` plays them with one field style, or the mixed
field): the mean log chance the walks' deals give each other seat's true length of each suit it
is not known to be out of, with and without the play's weights. Last line
``play_lengths_log_gain``: with less without, in nats a seat and suit.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
from collections.abc import Iterator
from pathlib import Path

from load_tests.bench_bots import bot_move, waiting_seat
from server.bots.knowledge import QUEEN_BIT, Knowledge, knowledge_of
from server.bots.pass_prior import LENGTHS, length_prior
from server.bots.play_prior import PlayKey, play_key
from server.bots.walks import _Rng
from server.bots.worlds import NoWorld, deal, queen_doubt, sampler_of
from server.room.game_view import game_view
from server.rules import SUIT_MASKS, Game, Phase, Rules, deal_from_deck

PANEL = ("basic", "ismcts", "ducker", "shooter", "blocker")
Key = PlayKey
SHRINK = 20
DRAWN = 200  # deals drawn a sampled decision
SAMPLED = 0.25  # the share of decisions sampled
TABLE_MODULE = Path(__file__).resolve().parent.parent / "server" / "bots" / "play_table.py"
Counts = dict[Key, list[float]]


def _decisions(hands: int, seed: int, field: str | None) -> Iterator[tuple[Game, Knowledge]]:
    """Each sampled decision of ``hands`` hands: the game, and the deciding seat's knowledge."""
    rng = random.Random(seed)
    game = Game(Rules())
    for i in range(hands):
        if game.phase is Phase.OVER:
            game = Game(Rules())
        deck = list(range(52))
        rng.shuffle(deck)
        game.start_hand(deal_from_deck(deck))
        players = [field or rng.choice(PANEL) for _ in range(4)]
        decision = 0
        while game.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
            seat = waiting_seat(game)
            if game.phase is Phase.PLAYING and rng.random() < SAMPLED:
                yield game, knowledge_of(game_view(game, seat))
            decision += 1
            bot_move(game, seat, players[seat], seed * 7919 + i * 131 + decision)


def _drawn(k: Knowledge, rng: _Rng) -> tuple[list[list[int]], list[float]]:
    """``DRAWN`` deals as the walks draw them, with the walks' weights (the pass's, the
    queen's), the play's weights left out."""
    try:
        sampler = sampler_of(k)
    except NoWorld:
        sampler = sampler_of(k, relaxed=True)
    prior = length_prior(k)
    doubt = queen_doubt(k)
    top = max(doubt) if doubt is not None else 1.0
    deals: list[list[int]] = []
    weights: list[float] = []
    for _ in range(DRAWN):
        hands = deal(sampler, rng.random)
        w = 1.0
        for s in range(4):
            if s == k.seat:
                continue
            if doubt is not None and hands[s] & QUEEN_BIT:
                w *= doubt[s] / top
            if prior is not None:
                w = prior.scale(w, hands, s)
        deals.append(hands)
        weights.append(w)
    total = sum(weights)
    return deals, [w / total for w in weights]


def _cells(k: Knowledge) -> Iterator[tuple[int, int, Key]]:
    """Each other seat and suit it is not known to be out of, with its key."""
    for s in range(4):
        if s == k.seat:
            continue
        for suit in range(4):
            if SUIT_MASKS[suit] & k.unplaced & ~k.cannot[s]:
                yield s, suit, play_key(k, s, suit)


def simulate(task: tuple[int, int]) -> tuple[Counts, Counts]:
    hands, seed = task
    true: Counts = {}
    model: Counts = {}
    rng = _Rng(seed)
    for game, k in _decisions(hands, seed, None):
        deals, weights = _drawn(k, rng)
        for s, suit, key in _cells(k):
            held = (game.hand.hands[s] & SUIT_MASKS[suit]).bit_count()  # type: ignore[union-attr]
            true.setdefault(key, [0.0] * LENGTHS)[held] += 1
            row = model.setdefault(key, [0.0] * LENGTHS)
            for drawn, w in zip(deals, weights, strict=True):
                row[(drawn[s] & SUIT_MASKS[suit]).bit_count()] += w
    return true, model


def table_of(true: Counts, model: Counts) -> dict[Key, tuple[float, ...]]:
    table: dict[Key, tuple[float, ...]] = {}
    for key in sorted(true):
        t, m = true[key], model[key]
        n = sum(t)
        # Shrunk toward 1 by SHRINK decisions on both sides, as the pass's table is.
        table[key] = tuple(
            round(min(10.0, max(0.1, (t[x] + SHRINK) / (m[x] + SHRINK))), 2) for x in range(LENGTHS)
        )
        assert abs(sum(m) - n) < 1e-6 * max(n, 1.0)
    return table


def check(hands: int, seed: int, field: str | None, table: dict[Key, tuple[float, ...]]) -> float:
    """The mean gain in log chance of the true lengths from the play's weights (nats a cell)."""
    rng = _Rng(seed)
    gain = 0.0
    cells = 0
    for game, k in _decisions(hands, seed, field):
        deals, weights = _drawn(k, rng)
        cells_here = list(_cells(k))
        reweighed = list(weights)
        for i, drawn in enumerate(deals):
            for s, suit, key in cells_here:
                weights_row = table.get(key)
                if weights_row is not None:
                    reweighed[i] *= weights_row[(drawn[s] & SUIT_MASKS[suit]).bit_count()]
        total = sum(reweighed)
        for s, suit, _ in cells_here:
            held = (game.hand.hands[s] & SUIT_MASKS[suit]).bit_count()  # type: ignore[union-attr]
            before = after = 0.0
            for drawn, w, v in zip(deals, weights, reweighed, strict=True):
                if (drawn[s] & SUIT_MASKS[suit]).bit_count() == held:
                    before += w
                    after += v / total
            floor = 0.02 / LENGTHS  # a little of every length, so a miss is not -inf
            gain += math.log(0.98 * after + floor) - math.log(0.98 * before + floor)
            cells += 1
    return gain / max(cells, 1)


def write_table(table: dict[Key, tuple[float, ...]], hands: int, seed: int) -> None:
    lines = [
        '"""The play\'s length weights, generated by ``python -m load_tests.play_lengths --hands',
        f'{hands} --seed {seed} --write`` (``pass_prior`` reads them; do not edit by hand)."""',
        "",
        "# (pass, stage, suit, leads, sheds): a weight for each length of the suit the seat holds",
        "PLAY_WEIGHTS: dict[tuple[int, int, int, int, int], tuple[float, ...]] = {",
    ]
    for key, row in table.items():
        line = f"    {key}: ({', '.join(repr(x) for x in row)}),"
        if len(line) <= 100:
            lines.append(line)
        else:
            lines.extend([f"    {key}: (", *(f"        {x!r}," for x in row), "    ),"])
    lines.append("}")
    TABLE_MODULE.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="rewrite server/bots/play_table.py")
    parser.add_argument("--check-hands", type=int, default=400)
    parser.add_argument("--check-field", default=None, help="one field style for the check")
    parser.add_argument("--check-only", action="store_true", help="check the written table")
    args = parser.parse_args(argv)
    if args.check_only:
        from server.bots.play_table import PLAY_WEIGHTS

        gain = check(args.check_hands, args.seed + 1, args.check_field, PLAY_WEIGHTS)
        print(f"play_lengths_log_gain: {gain:.4f}")
        return
    parts = 8
    tasks = [(args.hands // parts, args.seed * 1000 + i) for i in range(parts)]
    true: Counts = {}
    model: Counts = {}
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        for t, m in pool.imap_unordered(simulate, tasks):
            for key, row in t.items():
                acc = true.setdefault(key, [0.0] * LENGTHS)
                accm = model.setdefault(key, [0.0] * LENGTHS)
                for x in range(LENGTHS):
                    acc[x] += row[x]
                    accm[x] += m[key][x]
    table = table_of(true, model)
    for key, weights in table.items():
        n = int(sum(true[key]))
        print(key, n, " ".join(f"{x:.2f}" for x in weights[:9]))
    if args.write:
        write_table(table, args.hands, args.seed)
        print(f"wrote {len(table)} rows to {TABLE_MODULE}")
    gain = check(args.check_hands, args.seed + 1, args.check_field, table)
    print(f"play_lengths_log_gain: {gain:.4f}")


if __name__ == "__main__":
    main()
