"""Sampling the hidden cards: deals of the unseen cards to the other seats that fit every fact.

A sampled world gives each other seat exactly as many cards as its view count says, keeps every
card we passed with its receiver until played, and never puts a card in a hand that has shown it
cannot hold it (a suit it did not follow, say). Cards are placed most-constrained first, each to
a seat drawn in proportion to the room left in its hand (which is exactly a uniform deal when
nothing is known), and a placement is kept only if the rest can still be placed (Hall's
condition over the seven groups of seats), so sampling never dead-ends.
"""

from __future__ import annotations

import random

from protocol.cards import cards_in

from .knowledge import Knowledge

# For each group of the three other seats (a 3-bit set), the eligibility patterns inside it.
_INSIDE: tuple[tuple[int, ...], ...] = tuple(
    tuple(p for p in range(1, 8) if p & ~t == 0) for t in range(8)
)


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


def sample_world(k: Knowledge, rng: random.Random, *, relaxed: bool = False) -> list[int]:
    """Four hands (ours included) consistent with ``k``; ``relaxed`` trusts only what a
    revoke cannot fake. Raises ``NoWorld`` when nothing fits."""
    me = k.seat
    others = [s for s in range(4) if s != me]
    cannot = k.shown_cannot if relaxed else k.cannot
    hands = [k.has[s] for s in range(4)]
    need = [k.counts[s] - k.has[s].bit_count() for s in others]
    cards = cards_in(k.unplaced)
    if sum(need) != len(cards) or min(need) < 0:
        raise NoWorld("the card counts do not add up")
    blocked = (cannot[others[0]] | cannot[others[1]] | cannot[others[2]]) & k.unplaced
    if not blocked:
        # Nothing known about who holds what: a plain shuffle and deal.
        rng.shuffle(cards)
        at = 0
        for i, s in enumerate(others):
            for c in cards[at : at + need[i]]:
                hands[s] |= 1 << c
            at += need[i]
        return hands

    pattern: dict[int, int] = {}
    count = [0] * 8
    for c in cards:
        bit = 1 << c
        p = sum(1 << i for i, s in enumerate(others) if not cannot[s] & bit)
        pattern[c] = p
        count[p] += 1
    if not _feasible(count, need):
        raise NoWorld("no deal fits the voids shown")
    rng.shuffle(cards)
    # Most constrained first (fewest seats may hold it), random order within.
    cards.sort(key=lambda c: pattern[c].bit_count())
    restricted = sum(count[p] for p in (1, 2, 3, 4, 5, 6))
    for c in cards:
        p = pattern[c]
        choices = [i for i in range(3) if p >> i & 1 and need[i] > 0]
        count[p] -= 1
        if p != 7:
            restricted -= 1
        while True:
            total = sum(need[i] for i in choices)
            pick = rng.randrange(total)
            for i in choices:
                pick -= need[i]
                if pick < 0:
                    break
            need[i] -= 1
            # With only fully free cards left any split of the room works; else check.
            if not restricted or _feasible(count, need):
                break
            need[i] += 1
            choices.remove(i)
        hands[others[i]] |= 1 << c
    return hands


def sample_worlds(k: Knowledge, rng: random.Random, n: int) -> list[list[int]]:
    """``n`` worlds; if a revoke made the facts contradictory, the revocable facts are dropped."""
    try:
        return [sample_world(k, rng) for _ in range(n)]
    except NoWorld:
        return [sample_world(k, rng, relaxed=True) for _ in range(n)]


def placeholder_world(k: Knowledge) -> list[int]:
    """Any four hands with the right counts (unplaced cards in order): enough for the engine to
    say what *this* seat may play, which depends only on its own cards and the plays so far."""
    hands = list(k.has)
    cards = cards_in(k.unplaced)
    at = 0
    for s in range(4):
        if s != k.seat:
            take = k.counts[s] - hands[s].bit_count()
            for c in cards[at : at + take]:
                hands[s] |= 1 << c
            at += take
    return hands
