"""Sparring styles: small card policies that play Hearts differently from ``basic``.

They are the panel the search bots are measured against (``load_tests.bench_bots``), so that a
level's strength is not just its knowledge of the basic bot's habits. None of them searches;
each is a pass rule and a play rule, a few integer operations on card masks.

- ``ducker``, a cautious player: passes its highest cards, ducks every trick it can, and when it
  cannot duck plays its *lowest* card; out of the suit led it dumps the queen and its hearts at
  the first chance. It never takes a clean last trick to get rid of a high card, and never
  watches for a moon.
- ``shooter``, an aggressive moon-shooter: keeps high cards and hearts in the pass, and goes for
  the moon whenever its hand is strong enough and nobody else has taken a point; it gives up
  (and plays like ``basic``) once another seat has points.
- ``blocker``: ``basic``'s play, but it treats a seat as running for the moon at the first
  sign: the only seat with points, once it has four of them or the queen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.core.rules import HEARTS_MASK, POINT_CARDS, SUIT_MASKS

from .basic import basic_pass, basic_play
from .knowledge import Knowledge
from .policy import NON_POINTS, QUEEN, choose, highest_rank, low_rank, shoot_card

STYLES = ("ducker", "shooter", "blocker")
BLOCK_SIGN_POINTS = 4  # the blocker watches a seat with every point so far, this many or the queen
SHOOT_STRENGTH = 8  # the shooter goes for the moon with at least this many strong cards
SHOOT_COMMITTED = 8  # ... or once it holds every point so far and at least this many


def _ranked(hand: int, key: Callable[[int], Any]) -> list[int]:
    cards = [c for c in range(52) if hand >> c & 1]
    cards.sort(key=key)
    return cards


def _three(cards: list[int]) -> int:
    return (1 << cards[0]) | (1 << cards[1]) | (1 << cards[2])


def ducker_pass(hand: int) -> int:
    """The three highest cards; the queen and high spades first, then hearts on ties."""

    def danger(c: int) -> tuple[int, int, int]:
        spade_top = 1 if c in (36, 37, 38) else 0
        return (-spade_top, -(c % 13), -(c // 13))

    return _three(_ranked(hand, danger))


def ducker_play(k: Knowledge, legal: int) -> int:
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    if not k.trick:
        return low_rank(legal)  # lead the lowest card, whatever suit
    suit = SUIT_MASKS[k.trick[0] // 13]
    follow = legal & suit
    if follow:
        win = max(c for c in k.trick if (1 << c) & suit)
        below = follow & ((1 << win) - 1)
        if below:
            return below.bit_length() - 1
        safe = follow & ~QUEEN
        low = safe or follow
        return (low & -low).bit_length() - 1  # cannot duck: lose as little rank as possible
    if legal & QUEEN:
        return 36
    hearts = legal & HEARTS_MASK
    if hearts:
        return hearts.bit_length() - 1
    return highest_rank(legal, k.hand)


def _strength(hand: int) -> int:
    """Cards that win tricks on their own: hearts from the ten, spades from the queen, aces and
    kings of clubs and diamonds; long hearts count one more."""
    strong = 0
    for s in range(4):
        m = hand & SUIT_MASKS[s]
        cut = 13 * s + (8 if s == 3 else 10 if s == 2 else 11)
        strong += (m >> cut).bit_count()
    if (hand & HEARTS_MASK).bit_count() >= 6:
        strong += 1
    return strong


def shooter_pass(hand: int) -> int:
    """The three lowest cards outside hearts (low cards lose the tricks a moon must win)."""
    return _three(_ranked(hand, lambda c: (c // 13 == 3, c % 13, c)))


def _shooting(k: Knowledge) -> bool:
    pts = k.points_taken()
    others = sum(p for s, p in enumerate(pts) if s != k.seat)
    if others:
        return False
    if pts[k.seat] >= SHOOT_COMMITTED:
        return True
    return _strength(k.hand) + len(k.tricks) // 3 >= SHOOT_STRENGTH - 2 * (pts[k.seat] > 0)


def shooter_play(k: Knowledge, legal: int) -> int:
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    if _shooting(k):
        unplayed = ((1 << 52) - 1) & ~k.played
        return shoot_card(k.hand, legal, unplayed, k.trick)
    return basic_play(k, legal)


def _first_sign_runner(k: Knowledge) -> int:
    runner = k.moon_runner()
    if runner < 0 or runner == k.seat:
        return -1
    taken = k.taken[runner]
    if taken & QUEEN or (taken & POINT_CARDS).bit_count() >= BLOCK_SIGN_POINTS:
        return runner
    return -1


def blocker_play(k: Knowledge, legal: int) -> int:
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    unplayed = ((1 << 52) - 1) & ~k.played
    leader = k.leader if k.trick else k.seat
    runner = _first_sign_runner(k)
    if runner >= 0 and not k.trick:
        # Leading against a runner: lead low so someone else can take the trick, and never a
        # point card it would collect.
        safe = legal & NON_POINTS
        return low_rank(safe or legal)
    return choose(k.seat, k.hand, legal, unplayed, k.trick, leader, runner)


def style_pass(style: str, hand: int) -> int:
    if style == "ducker":
        return ducker_pass(hand)
    if style == "shooter":
        return shooter_pass(hand)
    if style == "blocker":
        return basic_pass(hand)
    raise ValueError(f"unknown style {style!r}; one of {STYLES}")


def style_play(style: str, k: Knowledge, legal: int) -> int:
    if style == "ducker":
        return ducker_play(k, legal)
    if style == "shooter":
        return shooter_play(k, legal)
    if style == "blocker":
        return blocker_play(k, legal)
    raise ValueError(f"unknown style {style!r}; one of {STYLES}")
