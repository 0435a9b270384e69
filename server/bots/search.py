"""Determinized Monte-Carlo search: sample the hidden cards, play each deal out, compare means.

For a play: sample deals consistent with what the seat knows, group the legal cards into classes
of equal value (touching cards of one suit with nothing between them held by anyone else are the
same card in effect), and for every class play its card in each deal and the rest of the hand
with the fast policy. All classes see the same deals, so their means differ by the card, not by
the luck of the draw. The class with the best mean utility wins.

The moon, both ways. If one other seat has taken every point so far and its cards are strong
enough to make the moon in a fair share of deals when nobody blocks it, the playouts treat it as
running and everyone else blocks it, so taking a heart from it now is valued at what it saves.
If nobody else has points, the seat also tries each class with the rest played for the moon, and
keeps that line when it makes the moon in most deals and is worth more; once the seat has taken
a lot of points, all of them, it needs fewer deals to keep going (it has committed).

For a pass: candidate passes are the three-card sets among the cards the rule-based bot most
wants to pass, plus passes that empty a short suit. Each is tried on the same sampled deals (the
other seats pass as the basic bot would) and the hand played out; a first round on a few deals
keeps the best few for a second round on many more.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import combinations

from server.rules import SUIT_MASKS, Hand, PassDirection, points_in

from .basic import basic_pass, pass_scores
from .knowledge import Knowledge
from .levels import BotLevel
from .outcome import scored, utility
from .playout import play_out
from .worlds import sample_worlds

PROBE_WORLDS = 16
THREAT_RATE = 0.25  # an opponent running with this chance unblocked is blocked in the search
OWN_PROBE_RATE = 0.3  # below this, shooting is not even tried
SHOOT_RATE = 0.5  # the moon line is taken only when it makes the moon in most deals ...
COMMITTED_RATE = 0.3  # ... or in this many once the seat holds this many points, all of them
COMMITTED_POINTS = 14


@dataclass(slots=True)
class Option:
    """One candidate: a class of equal cards to play, or three cards to pass."""

    cards: int  # play: the class of equal cards; pass: the three cards
    card: int  # play: the card played for the class; pass: -1
    cost: float  # mean points this seat takes this hand (moon rule applied)
    value: float  # mean utility (points, and the game near the target); higher is better
    moon_rate: float  # share of the deals in which this seat shot the moon
    shoot: bool  # valued by playing on for the moon
    worlds: int


@dataclass(slots=True)
class SearchResult:
    options: list[Option]  # best first
    runner: int  # another seat the search treated as running for the moon, or -1
    shooting: bool  # the best option plays for the moon


def equal_classes(k: Knowledge, legal: int) -> list[int]:
    """Legal cards grouped by equal value: touching in one suit once played cards and our own
    are left out, and worth the same points (the queen of spades stands alone)."""
    held_elsewhere = k.unseen
    classes: list[int] = []
    for suit in range(4):
        m = legal & SUIT_MASKS[suit]
        current = 0
        prev = -1
        while m:
            bit = m & -m
            m ^= bit
            c = bit.bit_length() - 1
            between = held_elsewhere & (bit - (1 << (prev + 1))) if prev >= 0 else 1
            if current and not between and c != 36 and prev != 36:
                current |= bit
            else:
                if current:
                    classes.append(current)
                current = bit
            prev = c
        if current:
            classes.append(current)
    return classes


def _evaluate(
    k: Knowledge, bases: list[Hand], card: int, runner: int, block: bool = True
) -> tuple[float, float, float]:
    """Mean cost, mean utility and moon share of playing ``card`` then the policy."""
    me, scores, rules = k.seat, k.scores, k.rules
    cost = value = 0.0
    moons = 0
    for base in bases:
        h = base.copy()
        h.play(me, card)
        play_out(h, runner, block)
        pts = [points_in(t) for t in h.taken]
        if pts[me] == 26:
            moons += 1
        final = scored(pts, scores, rules)
        cost += final[me]
        value += utility(me, scores, rules, final)
    n = len(bases)
    return cost / n, value / n, moons / n


def _moon_rate(bases: list[Hand], runner: int, block: bool) -> float:
    made = 0
    for base in bases:
        h = base.copy()
        play_out(h, runner, block)
        if points_in(h.taken[runner]) == 26:
            made += 1
    return made / len(bases)


def search_play(k: Knowledge, legal: int, level: BotLevel, rng: random.Random) -> SearchResult:
    classes = equal_classes(k, legal)
    if len(classes) == 1:
        c = classes[0]
        card = c.bit_length() - 1
        return SearchResult([Option(c, card, 0.0, 0.0, 0.0, False, 0)], -1, False)
    remaining = max(1, sum(k.counts))
    n = level.play_budget // (len(classes) * remaining)
    n = max(level.min_worlds, min(level.max_worlds, n))
    worlds = sample_worlds(k, rng, n)
    bases = [Hand.from_position(w, k.tricks, k.trick) for w in worlds]
    me = k.seat
    probe = bases[:PROBE_WORLDS]

    runner = -1
    leader = k.moon_runner()
    pts = k.points_taken()
    if leader >= 0 and leader != me and _moon_rate(probe, leader, False) >= THREAT_RATE:
        runner = leader
    own_moon = leader in (-1, me) and _moon_rate(probe, me, True) >= OWN_PROBE_RATE
    need = COMMITTED_RATE if leader == me and pts[me] >= COMMITTED_POINTS else SHOOT_RATE

    options: list[Option] = []
    for cls in classes:
        card = cls.bit_length() - 1
        cost, value, moon = _evaluate(k, bases, card, runner)
        option = Option(cls, card, cost, value, moon, False, len(bases))
        if own_moon:
            s_cost, s_value, s_moon = _evaluate(k, bases, card, me)
            if s_moon >= need and s_value > value:
                option = Option(cls, card, s_cost, s_value, s_moon, True, len(bases))
        options.append(option)
    options.sort(key=lambda o: -o.value)
    return SearchResult(options, runner, options[0].shoot)


def pass_candidates(hand: int) -> list[int]:
    """Three-card sets worth trying: the basic pass first, then sets from the worst cards."""
    scores = pass_scores(hand)
    ranked = sorted(scores, key=lambda c: (-scores[c], -c))
    first = basic_pass(hand)
    found = [first]
    seen = {first}
    for combo in combinations(ranked[:6], 3):
        m = (1 << combo[0]) | (1 << combo[1]) | (1 << combo[2])
        if m not in seen:
            seen.add(m)
            found.append(m)
    for suit in (0, 1):
        short = hand & SUIT_MASKS[suit]
        if 0 < short.bit_count() <= 3:
            m = short
            for c in ranked:
                if m.bit_count() == 3:
                    break
                m |= 1 << c
            if m not in seen:
                seen.add(m)
                found.append(m)
    return found


def _pass_evaluate(
    k: Knowledge, deals: list[tuple[list[int], list[int]]], cards: int
) -> tuple[float, float, float]:
    me, scores, rules = k.seat, k.scores, k.rules
    direction = PassDirection(k.direction)
    cost = value = 0.0
    moons = 0
    for hands, passes in deals:
        h = Hand.deal(hands, direction)
        for s in range(4):
            h.choose_pass(s, cards if s == me else passes[s])
        play_out(h)
        pts = [points_in(t) for t in h.taken]
        if pts[me] == 26:
            moons += 1
        final = scored(pts, scores, rules)
        cost += final[me]
        value += utility(me, scores, rules, final)
    n = len(deals)
    return cost / n, value / n, moons / n


def search_pass(k: Knowledge, level: BotLevel, rng: random.Random) -> SearchResult:
    candidates = pass_candidates(k.hand)
    worlds = sample_worlds(k, rng, level.pass_worlds)
    deals = [(w, [0 if s == k.seat else basic_pass(w[s]) for s in range(4)]) for w in worlds]
    screen = deals[: level.pass_screen]
    first: list[Option] = []
    for cards in candidates:
        cost, value, moon = _pass_evaluate(k, screen, cards)
        first.append(Option(cards, -1, cost, value, moon, False, len(screen)))
    first.sort(key=lambda o: -o.value)
    rest = deals[level.pass_screen :]
    final: list[Option] = []
    for o in first[: level.pass_finalists]:
        if rest:
            cost, value, moon = _pass_evaluate(k, rest, o.cards)
            n0, n1 = o.worlds, len(rest)
            o = Option(
                o.cards,
                -1,
                (o.cost * n0 + cost * n1) / (n0 + n1),
                (o.value * n0 + value * n1) / (n0 + n1),
                (o.moon_rate * n0 + moon * n1) / (n0 + n1),
                False,
                n0 + n1,
            )
        final.append(o)
    final.sort(key=lambda o: -o.value)
    return SearchResult(final + first[level.pass_finalists :], -1, False)
