"""Sampling the hidden cards: deals of the unseen cards to the other seats that fit every fact.

A sampled world gives each other seat exactly as many cards as its view count says, keeps every
card we passed with its receiver until played, and never puts a card in a hand that has shown it
cannot hold it (a suit it did not follow, say). Cards are placed most-constrained first, each to
a seat drawn in proportion to the room left in its hand (which is exactly a uniform deal when
nothing is known), and a placement is kept only if the rest can still be placed (Hall's
condition over the groups of seats), so sampling never dead-ends.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from server.core.rules import HEARTS_MASK, POINT_CARDS, SUIT_MASKS, trick_winner

from .knowledge import FULL_DECK, QUEEN_BIT, Knowledge
from .playout import cards_of, watched
from .policy import choose

SURPRISE = 0.25  # how much less likely a deal is for each play the policy would not have made
MAX_SURPRISES = 4
UNLIKE_POLICY = 2  # if every candidate deal has this many surprises, the policy is not a guide

# For each group of the three other seats (a 3-bit set), the eligibility patterns inside it.
_INSIDE: tuple[tuple[int, ...], ...] = tuple(
    tuple(p for p in range(1, 8) if p & ~t == 0) for t in range(8)
)


_PAIR_SEATS = {3: (0, 1), 5: (0, 2), 6: (1, 2)}


def _shuffle(cards: list[int], rand: Callable[[], float]) -> None:
    """Fisher-Yates with float draws: the same uniform shuffle, cheaper than random.shuffle."""
    for i in range(len(cards) - 1, 0, -1):
        j = int(rand() * (i + 1))
        cards[i], cards[j] = cards[j], cards[i]


class NoWorld(Exception):
    """No deal fits the facts (only possible when a revoke faked one): sample with fewer."""


def _feasible(count: list[int], need: list[int]) -> bool:
    if count[0]:
        return False
    for t in range(1, 7):
        room = (need[0] if t & 1 else 0) + (need[1] if t & 2 else 0) + (need[2] if t & 4 else 0)
        cards = 0
        for p in _INSIDE[t]:
            cards += count[p]
        if cards > room:
            return False
    return True


# What every deal of one position starts from (``sampler_of``): the four hands with the cards
# only one seat may hold already placed, the three other seats, the cards each still needs, and
# the unplaced cards grouped by the 3-bit pattern of the seats that may hold them.
Sampler = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def sampler_of(k: Knowledge, *, relaxed: bool = False) -> Sampler:
    """The fixed part of ``sample_world`` for ``k``, done once for any number of deals;
    ``relaxed`` trusts only what a revoke cannot fake. Raises ``NoWorld`` when nothing fits."""
    me = k.seat
    others = tuple(s for s in range(4) if s != me)
    cannot = k.shown_cannot if relaxed else k.cannot
    need = [k.counts[s] - k.has[s].bit_count() for s in others]
    if sum(need) != k.unplaced.bit_count() or min(need) < 0:
        raise NoWorld("the card counts do not add up")
    pattern = [0] * 8
    if not (cannot[others[0]] | cannot[others[1]] | cannot[others[2]]) & k.unplaced:
        # Nothing known about who holds what: every card may go anywhere.
        pattern[7] = k.unplaced
        return tuple(k.has), others, tuple(need), tuple(pattern)
    free = [k.unplaced & ~cannot[s] for s in others]
    for p in range(8):
        m = k.unplaced
        for i in range(3):
            m &= free[i] if p >> i & 1 else ~free[i]
        pattern[p] = m
    count = [m.bit_count() for m in pattern]
    if not _feasible(count, need):
        raise NoWorld("no deal fits the voids shown")
    base = list(k.has)
    for i in range(3):
        # Cards only one seat may hold go there.
        base[others[i]] |= pattern[1 << i]
        need[i] -= count[1 << i]
        pattern[1 << i] = 0
    return tuple(base), others, tuple(need), tuple(pattern)


def deal(sampler: Sampler, rand: Callable[[], float]) -> list[int]:
    """One deal from ``sampler``, drawing from ``rand`` (floats in [0, 1))."""
    base, others, need0, pattern = sampler
    hands = list(base)
    need = list(need0)
    count = [m.bit_count() for m in pattern]
    # Cards two seats may hold: each to one of them in proportion to the room left, as long as
    # the cards of the other pairs still fit (the only way the rest could fail, Hall's rule).
    pairs = cards_of(pattern[3] | pattern[5] | pattern[6])
    _shuffle(pairs, rand)
    for c in pairs:
        bit = 1 << c
        p = 3 if pattern[3] & bit else 5 if pattern[5] & bit else 6
        a, b = _PAIR_SEATS[p]
        count[p] -= 1
        first = a if rand() * (need[a] + need[b]) < need[a] else b
        for i in (first, a + b - first):
            if need[i] <= 0:
                continue
            need[i] -= 1
            if (
                count[3] <= need[0] + need[1]
                and count[5] <= need[0] + need[2]
                and (count[6] <= need[1] + need[2])
            ):
                break
            need[i] += 1
        else:
            raise NoWorld("no deal fits the voids shown")
        hands[others[i]] |= bit
    # Cards any of them may hold: a plain deal of the room left.
    rest = cards_of(pattern[7])
    _shuffle(rest, rand)
    at = 0
    for i in range(3):
        for c in rest[at : at + need[i]]:
            hands[others[i]] |= 1 << c
        at += need[i]
    return hands


def sample_world(k: Knowledge, rng: random.Random, *, relaxed: bool = False) -> list[int]:
    """Four hands (ours included) consistent with ``k``; ``relaxed`` trusts only what a
    revoke cannot fake. Raises ``NoWorld`` when nothing fits."""
    return deal(sampler_of(k, relaxed=relaxed), rng.random)


def placeholder_world(k: Knowledge) -> list[int]:
    """Any four hands with the right counts (unplaced cards in order): enough for the engine to
    say what *this* seat may play, which depends only on its own cards and the plays so far."""
    hands = list(k.has)
    cards = cards_of(k.unplaced)
    at = 0
    for s in range(4):
        if s != k.seat:
            take = k.counts[s] - hands[s].bit_count()
            for c in cards[at : at + take]:
                hands[s] |= 1 << c
            at += take
    return hands


@dataclass(slots=True, frozen=True)
class _Play:
    """One play by another seat, with everything public at the moment it was made."""

    seat: int
    card: int
    trick: list[int]  # the cards already on the table
    leader: int
    unplayed: int  # cards not yet played before this one
    after: int  # this card and the ones the seat played later: in its hand at the time
    first_trick: bool
    hearts_broken: bool
    runner: int  # a seat the others were blocking (the basic bot's moon watch)


def other_plays(k: Knowledge) -> list[_Play]:
    """The plays of the other seats so far, in order, for ``surprises``."""
    plays: list[_Play] = []
    sequences = [(t[0], list(t[1:])) for t in k.tricks]
    if k.trick:
        sequences.append((k.leader, list(k.trick)))
    unplayed = FULL_DECK
    taken = [0, 0, 0, 0]
    later = list(k.played_by)
    broken = False
    runner = -1
    for number, (leader, cards) in enumerate(sequences):
        for i, card in enumerate(cards):
            seat = (leader + i) & 3
            if seat != k.seat:
                plays.append(
                    _Play(seat, card, cards[:i], leader, unplayed, later[seat], number == 0,
                          broken, runner if runner != seat else -1)
                )  # fmt: skip
            later[seat] &= ~(1 << card)
            unplayed &= ~(1 << card)
        if len(cards) == 4:
            taken[trick_winner(leader, cards)] |= sum(1 << c for c in cards)
            broken = broken or any(c >= 39 for c in cards)
            runner = watched(taken)
    return plays


def _choices(p: _Play, hold: int) -> int:
    """The cards the seat could choose from, holding ``hold``: the suit led if it held any,
    anything when out of it or leading (no points on the first trick and no heart lead before
    hearts break while it held something else). This judges no move: the engine does that."""
    if not p.trick:
        if p.first_trick:
            return 1
        return hold if p.hearts_broken else (hold & ~HEARTS_MASK or hold)
    follow = hold & SUIT_MASKS[p.trick[0] // 13]
    if follow:
        return follow
    return (hold & ~POINT_CARDS or hold) if p.first_trick else hold


def surprises(k: Knowledge, world: list[int], plays: list[_Play] | None = None) -> int:
    """How many of the other seats' plays so far the policy would not have made, had they held
    the cards ``world`` gives them. Few surprises: a deal that explains the play well.

    A seat is expected to play like ``policy.choose`` (duck as high as it can, dump the queen
    when out of a suit, lead low, ...); people and other bots often do, which is what makes this
    worth knowing, and a surprise only makes a deal less likely, never impossible.
    """
    count = 0
    for p in plays if plays is not None else other_plays(k):
        hold = world[p.seat] | p.after
        legal = _choices(p, hold)
        if legal & (legal - 1):
            pick = choose(p.seat, hold, legal, p.unplayed, p.trick, p.leader, p.runner)
            if pick != p.card:
                count += 1
                if count >= MAX_SURPRISES:
                    break  # the deal is as good as ruled out: no need to count on
    return count


def plausible_worlds(
    k: Knowledge,
    rng: random.Random,
    n: int,
    *,
    relaxed: bool = False,
    pool: int = 3,
    surprise: float = SURPRISE,
    fit: list[bool] | None = None,
) -> list[list[int]]:
    """``n`` worlds drawn from ``pool * n`` candidates in proportion to ``surprise ** surprises``:
    deals that explain how the others played are drawn more often. ``fit``, if given, gets
    whether any candidate explained the play as the policy would have made it."""
    candidates = [sample_world(k, rng, relaxed=relaxed) for _ in range(n * pool)]
    if pool == 1:
        return candidates
    plays = other_plays(k)
    counts = [surprises(k, w, plays) for w in candidates]
    if fit is not None:
        fit.append(min(counts) < UNLIKE_POLICY)
    if min(counts) >= UNLIKE_POLICY:
        # Not one deal explains the play as the policy would have made it: these players do
        # not play like it, so reading their cards through it would mislead. Draw uniformly.
        return candidates[:n]
    weights = [surprise**c for c in counts]
    return rng.choices(candidates, weights=weights, k=n)


QUEEN_DOUBT = 0.2  # how much less likely a seat holds the queen for each free dump it passed up


def queen_doubt(k: Knowledge) -> tuple[float, float, float, float] | None:
    """For each seat, how likely it is to hold the queen of spades against a uniform deal, from
    the free dumps of her it passed up; None when nothing is known (or she is placed already).

    A free dump: out of the suit led after the first trick, or a lower spade played under the
    king or ace of spades on the trick. Nearly every player, a searching one included, drops her
    there, so a seat that did not likely has not got her. Not while one seat has taken every
    point so far: a moon run changes what the others want to do with her.
    """
    if not k.unplaced & QUEEN_BIT:
        return None
    doubt = [1.0, 1.0, 1.0, 1.0]
    sequences = [(t[0], list(t[1:])) for t in k.tricks]
    if k.trick:
        sequences.append((k.leader, list(k.trick)))
    taken = [0, 0, 0, 0]
    for number, (leader, cards) in enumerate(sequences):
        holders = [s for s in range(4) if taken[s] & POINT_CARDS]
        if number and len(holders) != 1:
            led = cards[0] // 13
            for i in range(1, len(cards)):
                seat, card = (leader + i) & 3, cards[i]
                if seat == k.seat:
                    continue
                under_top_spade = led == 2 and card < 36 and bool({37, 38} & set(cards[:i]))
                if card // 13 != led or under_top_spade:
                    doubt[seat] *= QUEEN_DOUBT
        if len(cards) == 4:
            taken[trick_winner(leader, cards)] |= sum(1 << c for c in cards)
    return None if min(doubt) == 1.0 else (doubt[0], doubt[1], doubt[2], doubt[3])
