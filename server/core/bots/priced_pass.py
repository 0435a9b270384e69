"""Strong's pass: basic's most passable cards, each three of them priced by the walks.

Basic scores each card by the trouble it brings and passes the three worst (``basic.py``). That
scoring is card by card; it cannot see a hand as a whole (which three leave a void the queen
can go into, whether the spades left still guard her, what the cards passed to us do to it).
So strong takes the ``POOL`` cards basic most wants to pass and prices every three of them
(twenty passes, basic's own among them) by playing the hand out.

Each price is strong's mean points over ``DRAWS`` draws of what the pass brings: the passer's
hand dealt from the cards we cannot see, the three it sends us chosen as basic would (players
pass their dangerous cards), the rest of the deal fresh each walk, our three with the receiver.
From each draw strong's own tree walks (``walks.walk_price``) play the whole hand from the first
lead, every seat searched. The draws and the walks' seeds are shared by every candidate, so
the luck of a draw weighs on all of them alike.

Many draws with few walks each price a pass better than few draws with many walks: most of a
price's noise is the deal, not the play (docs/bots.md). Still, the difference of two prices
has a standard error of about a quarter of a point, so among twenty candidates the cheapest
beats basic's by luck alone in many hands; basic's pass is kept unless another is ``MARGIN``
points cheaper.

The budget counts walks, never seconds: deterministic per position and seed. ``stop`` (the
server's clock) ends the pricing; with fewer than ``MIN_DRAWS`` draws priced, basic's pass is
made.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

from protocol.cards import mask_of
from server.core.rules import TWO_OF_CLUBS

from .basic import basic_pass, pass_scores
from .knowledge import FULL_DECK, Knowledge
from .playout import cards_of
from .search import Option, SearchResult
from .walks import Start, moon_table, walk_price
from .worlds import Sampler

POOL = 6  # basic's most passable cards the candidates are drawn from: twenty threes
DRAWS = 24  # draws of what the pass brings, shared by every candidate
WALKS = 130  # walks a candidate is priced by on each draw
MARGIN = 0.3  # points a hand another pass must save over basic's to be made instead
MIN_DRAWS = 2  # draws priced before anything but basic's pass is made
# The race (``price_passes`` with ``race``; off for strong: measured only together with the
# walks' settling, whose runs all played worse, docs/bots.md round 24): from this many draws on,
# after each draw, a candidate is dropped once its price is ``RACE_Z`` standard errors of the
# paired difference (over the draws) dearer than the cheapest candidate's, or once it is that
# sure not to save ``MARGIN`` over basic's; basic's own is never dropped, and the pricing ends
# when nothing else is left, or when one other is left and that sure to save ``MARGIN``.
RACE_FIRST = 4
RACE_Z = 2.5


@dataclass(frozen=True, slots=True)
class PassPrice:
    cards: int  # the three cards, a mask
    points: float  # strong's mean points a hand over the walks of every draw priced
    draws: int  # draws priced


@dataclass(frozen=True, slots=True)
class _Draw:
    kept: int  # the passer's cards after its pass
    sent: int  # the three it passes us
    seed: int  # the walks' seed, every candidate's


def candidates(hand: int) -> list[int]:
    """Every three of the ``POOL`` cards basic most wants to pass, basic's own pass first."""
    scores = pass_scores(hand)
    pool = sorted(scores, key=lambda c: (-scores[c], -c))[:POOL]
    own = basic_pass(hand)
    rest = [(1 << a) | (1 << b) | (1 << c) for a, b, c in combinations(pool, 3)]
    return [own, *(m for m in rest if m != own)]


def _draw(k: Knowledge, rng: random.Random) -> _Draw:
    passer = mask_of(rng.sample(cards_of(FULL_DECK & ~k.hand), 13))
    sent = basic_pass(passer)
    return _Draw(passer & ~sent, sent, rng.getrandbits(64))


def _position(k: Knowledge, passed: int, draw: _Draw) -> tuple[Sampler, Start]:
    """The deal's fixed part and the start of play after ``passed`` goes and ``draw`` comes."""
    me, to, source = k.seat, k.pass_to, k.pass_from
    base = [0, 0, 0, 0]
    base[me] = (k.hand & ~passed) | draw.sent
    base[to] |= passed
    base[source] |= draw.kept
    others = tuple(s for s in range(4) if s != me)
    rest = FULL_DECK & ~k.hand & ~draw.kept & ~draw.sent
    need = [13 - base[s].bit_count() for s in range(4)]
    leader = next((s for s in range(4) if base[s] >> TWO_OF_CLUBS & 1), -1)
    if leader < 0:
        # The two of clubs is among the cards dealt each walk: the walks need its holder (the
        # first leader) fixed, so it goes to a seat in proportion to the room left, as a
        # uniform deal would put it, on the draw's own random numbers.
        pick = random.Random(draw.seed).random() * sum(need[s] for s in others)
        leader = others[-1]
        for s in others:
            pick -= need[s]
            if pick < 0:
                leader = s
                break
        base[leader] |= 1 << TWO_OF_CLUBS
        need[leader] -= 1
        rest &= ~(1 << TWO_OF_CLUBS)
    sampler: Sampler = (tuple(base), others, tuple(need[s] for s in others), (0,) * 7 + (rest,))
    start: Start = ((0, 0, 0, 0), (), leader, leader, 0, 1, 13)
    return sampler, start


def _surely_above(diffs: list[float], by: float) -> bool:
    """Whether the paired differences' mean is over ``by`` by more than ``RACE_Z`` of its
    standard errors."""
    n = len(diffs)
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean - by > RACE_Z * math.sqrt(var / n)


def _saves(mine: list[float], basics: list[float]) -> bool:
    """Whether a candidate surely saves more than ``MARGIN`` over basic's pass."""
    return _surely_above([b - a for a, b in zip(mine, basics, strict=True)], MARGIN)


def _race_cut(rows: list[list[float]], live: list[int]) -> list[int]:
    """The candidates (indexes; basic's is 0) still in the race after the draws of ``rows``
    (each live candidate's price on every draw so far)."""
    means = {i: sum(rows[i]) / len(rows[i]) for i in live}
    best = min(live, key=lambda i: (means[i], i))
    kept = []
    for i in live:
        if i == 0:  # basic's: never dropped
            kept.append(i)
            continue
        dearer = [a - b for a, b in zip(rows[i], rows[best], strict=True)]
        if i != best and _surely_above(dearer, 0.0):
            continue  # surely dearer than the cheapest
        if _surely_above([a - b for a, b in zip(rows[i], rows[0], strict=True)], -MARGIN):
            continue  # surely saves less than MARGIN over basic's: basic's would be made
        kept.append(i)
    return kept


def price_passes(
    k: Knowledge, seed: int, stop: Callable[[], bool] | None = None, race: bool = False
) -> list[PassPrice]:
    """Every candidate's price, cheapest first (ties to basic's order of the candidates), over
    ``DRAWS`` draws, or fewer if ``stop``, asked before each candidate's walks, says time is up
    (a draw not priced for every live candidate is dropped). With ``race`` a candidate the
    draws so far show to be dearer than another, or not to save ``MARGIN`` over basic's, is
    priced no more (``RACE_FIRST``): its price is over the draws it was priced on, and it is
    listed after every candidate still in the race."""
    rng = random.Random(seed)
    cands = candidates(k.hand)
    moon = moon_table(k)
    rows: list[list[float]] = [[] for _ in cands]
    live = list(range(len(cands)))
    for drawn in range(DRAWS):
        draw = _draw(k, rng)
        row: list[float] = []
        for i in live:
            if stop is not None and stop():
                break
            sampler, start = _position(k, cands[i], draw)
            row.append(walk_price(sampler, start, k.seat, WALKS, draw.seed, moon))
        if len(row) < len(live):  # a draw counts only when every live candidate was priced
            break
        for i, p in zip(live, row, strict=True):
            rows[i].append(p)
        if race and drawn + 1 >= RACE_FIRST:
            live = _race_cut(rows, live)
            if live == [0] or (len(live) == 2 and _saves(rows[live[1]], rows[0])):
                break
    prices = [
        PassPrice(c, sum(r) / max(len(r), 1), len(r)) for c, r in zip(cands, rows, strict=True)
    ]
    order = sorted(range(len(prices)), key=lambda i: (i not in live, prices[i].points, i))
    return [prices[i] for i in order]


def priced_pass(
    k: Knowledge, seed: int, stop: Callable[[], bool] | None = None, race: bool = False
) -> SearchResult:
    """The pass to make first, then the other candidates cheapest first (each ``Option``'s cost
    its price, its ``worlds`` the deals its walks played): the cheapest candidate when it saves
    more than ``MARGIN`` points over basic's pass, else basic's."""
    own = basic_pass(k.hand)
    prices = price_passes(k, seed, stop, race)
    basic_price = next(p for p in prices if p.cards == own)
    made = prices[0]
    if made.draws < MIN_DRAWS or made.points >= basic_price.points - MARGIN:
        made = basic_price
    return SearchResult(
        [
            Option(p.cards, -1, p.points, -p.points, 0.0, False, p.draws * WALKS)
            for p in (made, *(p for p in prices if p is not made))
        ],
        -1,
        False,
    )
