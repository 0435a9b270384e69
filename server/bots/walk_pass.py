"""Strong's pass: each candidate three cards priced by tree walks over the hand they leave.

The candidates are the three-card sets from basic's most passable cards (``basic.pass_scores``;
its own pass is one of them). Each is priced on the same few draws of what the pass brings: the
passer's hand dealt from the cards we cannot see, the three it sends us chosen as basic would
(people pass their dangerous cards), the rest of the deal uniform, our cards and the receiver's
three known. From each draw the walks of ``walks.py`` play the whole hand from the first lead,
every seat searched, and the candidate's price is our mean points over all its walks, the
table's moon rule applied. The cheapest is passed.

So the pass is judged by the play that follows it, searched like strong's own play, instead of
by a table of card weights; the draws are shared by every candidate, so the luck of a draw
weighs on all of them alike. The walks' budget counts walks, not seconds (deterministic per
position and seed); ``stop`` ends the pricing early, and the candidates priced on the most
draws so far decide.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

from .basic import basic_pass, pass_scores
from .knowledge import FULL_DECK, Knowledge
from .playout import cards_of
from .walks import TABLE_SENSE, Start, moon_table, walk_from

MARGIN = 0.3  # points a hand another pass must save over basic's to be passed instead
POOL = 6  # basic's most passable cards the candidates are drawn from: 20 sets of three
DRAWS = 8  # draws of what the pass brings, shared by every candidate
TWO_OF_CLUBS = 0


@dataclass(frozen=True, slots=True)
class PassPrice:
    cards: int  # the three cards, a mask
    points: float  # our mean points over the walks of every draw priced
    draws: int  # draws priced


def candidates(hand: int) -> list[int]:
    """Every three of the ``POOL`` cards basic most wants to pass, as masks."""
    scores = pass_scores(hand)
    pool = sorted(scores, key=lambda c: (-scores[c], -c))[:POOL]
    return [(1 << a) | (1 << b) | (1 << c) for a, b, c in combinations(pool, 3)]


_Draw = tuple[int, int, int]  # the passer's kept cards, what it sends us, the seed of the walks


def _draw(k: Knowledge, rng: random.Random) -> _Draw:
    unseen = cards_of(FULL_DECK & ~k.hand)
    passer = sum(1 << c for c in rng.sample(unseen, 13))
    sent = basic_pass(passer)
    return passer & ~sent, sent, rng.getrandbits(64)


def _position(
    k: Knowledge, passed: int, draw: _Draw, rng: random.Random
) -> tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]], Start]:
    """The deal's fixed part (a ``worlds.Sampler``) and the start of play after the pass."""
    me, to, source = k.seat, k.pass_to, k.pass_from
    kept, sent, _ = draw
    base = [0, 0, 0, 0]
    base[me] = (k.hand & ~passed) | sent
    base[to] |= passed
    base[source] |= kept
    others = tuple(s for s in range(4) if s != me)
    rest = FULL_DECK & ~k.hand & ~kept & ~sent
    need = [13 - base[s].bit_count() for s in range(4)]
    leader = next((s for s in range(4) if base[s] & 1), -1)
    if leader < 0:  # the two of clubs is in the unplaced cards: it goes where a card of them does
        pick = rng.random() * sum(need[s] for s in others)
        for s in others:
            pick -= need[s]
            if pick < 0 or s == others[-1]:
                leader = s
                break
        base[leader] |= 1 << TWO_OF_CLUBS
        need[leader] -= 1
        rest &= ~(1 << TWO_OF_CLUBS)
    pattern = (0, 0, 0, 0, 0, 0, 0, rest)
    sampler = (tuple(base), others, tuple(need[s] for s in others), pattern)
    start: Start = ((0, 0, 0, 0), (), leader, leader, 0, 1, 13)
    return sampler, start


def walk_pass(
    k: Knowledge, walks: int, seed: int, stop: Callable[[], bool] | None = None
) -> list[PassPrice]:
    """Every candidate's price after ``walks`` walks on each of ``DRAWS`` draws (fewer draws if
    ``stop`` says time is up), cheapest first; ties go to basic's order of the candidates."""
    rng = random.Random(seed)
    cands = candidates(k.hand)
    if basic_pass(k.hand) in cands:  # basic's own pass first: it wins a tie
        cands.remove(basic_pass(k.hand))
        cands.insert(0, basic_pass(k.hand))
    moon = moon_table(k)
    totals = [0.0] * len(cands)
    priced = 0
    for _ in range(DRAWS):
        if priced and stop is not None and stop():
            break
        draw = _draw(k, rng)
        for i, passed in enumerate(cands):
            # the same two of clubs holder and the same walks' seed for every candidate
            sampler, start = _position(k, passed, draw, random.Random(draw[2]))
            totals[i] += walk_from(sampler, start, k.seat, walks, draw[2], moon, TABLE_SENSE)
        priced += 1
    prices = [PassPrice(c, t / priced, priced) for c, t in zip(cands, totals, strict=True)]
    order = sorted(range(len(prices)), key=lambda i: (prices[i].points, i))
    return [prices[i] for i in order]


def walked_pass(k: Knowledge, walks: int, seed: int, stop: Callable[[], bool] | None = None) -> int:
    """The pass to make: the cheapest candidate if it saves more than ``MARGIN`` points over
    basic's pass, else basic's. Each price has a standard error of about 0.13 points, so among
    twenty candidates the cheapest often beats basic's by luck alone; the margin keeps basic's
    sense of the cards there and departs from it only where the walks see a real difference."""
    prices = walk_pass(k, walks, seed, stop)
    basic = basic_pass(k.hand)
    own = next(p.points for p in prices if p.cards == basic)
    return prices[0].cards if prices[0].points < own - MARGIN else basic
