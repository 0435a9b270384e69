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


def price_passes(
    k: Knowledge, seed: int, stop: Callable[[], bool] | None = None
) -> list[PassPrice]:
    """Every candidate's price, cheapest first (ties to basic's order of the candidates), over
    ``DRAWS`` draws, or fewer if ``stop``, asked before each candidate's walks, says time is up
    (a draw not priced for every candidate is dropped)."""
    rng = random.Random(seed)
    cands = candidates(k.hand)
    moon = moon_table(k)
    totals = [0.0] * len(cands)
    priced = 0
    for _ in range(DRAWS):
        draw = _draw(k, rng)
        row: list[float] = []
        for passed in cands:
            if stop is not None and stop():
                break
            sampler, start = _position(k, passed, draw)
            row.append(walk_price(sampler, start, k.seat, WALKS, draw.seed, moon))
        if len(row) < len(cands):  # a draw counts only when every candidate was priced on it
            break
        totals = [t + p for t, p in zip(totals, row, strict=True)]
        priced += 1
    prices = [PassPrice(c, t / max(priced, 1), priced) for c, t in zip(cands, totals, strict=True)]
    order = sorted(range(len(prices)), key=lambda i: (prices[i].points, i))
    return [prices[i] for i in order]


def priced_pass(k: Knowledge, seed: int, stop: Callable[[], bool] | None = None) -> SearchResult:
    """The pass to make first, then the other candidates cheapest first (each ``Option``'s cost
    its price, its ``worlds`` the deals its walks played): the cheapest candidate when it saves
    more than ``MARGIN`` points over basic's pass, else basic's."""
    own = basic_pass(k.hand)
    prices = price_passes(k, seed, stop)
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
