"""Playing a sampled deal to the end of the hand, fast.

The position comes from the rules engine (``Hand.from_position``: it checks that the cards add
up) and so do the candidate cards of the decision itself (``strict_legal``). The playout after
them is the hot loop of every search, so it keeps the state in locals: four hand masks, the
trick, the leader, whether hearts are broken, and applies the standard rules inline (follow
suit; no points on the first trick; no heart lead before hearts break). It never
changes the ``Hand`` it starts from, so a search needs no copy per trial. A test plays random
positions both ways, through ``Hand.legal_plays`` and ``Hand.play`` and through this loop, and
requires the same cards and the same result (``tests/core/bots/test_bots_worlds.py``).

The policy is ``policy.choose``; a single legal card is played without asking.
"""

from __future__ import annotations

from collections.abc import Callable

from server.core.rules import HEARTS_MASK, POINT_CARDS, SUIT_MASKS, Hand, points_in

from .policy import MOON_WATCH_POINTS, choose

_NOT_HEARTS = ((1 << 52) - 1) & ~HEARTS_MASK
_NOT_POINTS = ((1 << 52) - 1) & ~POINT_CARDS


def play_out(
    h: Hand,
    shooter: int = -1,
    block: bool = True,
    me: int = -1,
    noise: float = 0.0,
    rand: Callable[[], float] | None = None,
    first: int = -1,
) -> tuple[list[int], int]:
    """Play the hand on from ``h`` (unchanged) until the points are settled: the end of the
    hand, or earlier once every point card has been taken. Returns the cards each seat took
    and how many cards were played. ``first``, if given, is the card the seat to move plays
    first (a legal one: the caller asked the engine).

    Every seat plays the policy; ``shooter`` (if any) goes for the moon. With ``block`` the
    others block a seat running for the moon, as the basic bot does: the shooter from the start,
    else any seat that has taken every point so far and at least ``MOON_WATCH_POINTS``.

    The opponent model: with ``noise`` (and ``rand``), each seat other than ``me`` plays, with
    that chance at each choice, another of its legal cards at random instead of the policy's.
    Real opponents are not this policy; a search that expects them to be exploits habits they
    may not have (and reads their cards as if they had them), so it hedges.
    """
    taken = list(h.taken)
    seat = h.turn
    if seat < 0:
        return taken, 0
    hands = list(h.hands)
    trick = list(h.trick)
    leader = h.leader
    broken = h.hearts_broken
    first_trick = not h.tricks
    watch = block and shooter < 0
    # The watch starts from the points already taken, not from the next trick.
    runner = watched(taken) if watch else shooter if block else -1
    unplayed = hands[0] | hands[1] | hands[2] | hands[3]
    suit = SUIT_MASKS[trick[0] // 13] if trick else 0
    played = 0
    while True:
        hand = hands[seat]
        if first >= 0:
            card, first = first, -1
        else:
            if suit:  # strict_moves, inlined: this is the hot loop of every search
                legal = hand & suit
                if not legal:
                    legal = (hand & _NOT_POINTS or hand) if first_trick else hand
            elif first_trick:
                legal = 1  # the 2 of clubs opens the hand
            elif broken:
                legal = hand
            else:
                legal = hand & _NOT_HEARTS or hand
            if legal & (legal - 1):
                if noise and seat != me and rand is not None and rand() < noise:
                    cards = cards_of(legal)
                    card = cards[int(rand() * len(cards))]
                else:
                    shoots = seat == shooter
                    card = choose(seat, hand, legal, unplayed, trick, leader, runner, shoots)
            else:
                card = legal.bit_length() - 1
        bit = 1 << card
        hands[seat] = hand ^ bit
        unplayed ^= bit
        played += 1
        trick.append(card)
        if len(trick) == 1:
            suit = SUIT_MASKS[card // 13]
        if card >= 39:
            broken = True
        if len(trick) < 4:
            seat = (seat + 1) & 3
            continue
        # The trick is complete: the highest card of the suit led takes it.
        c0, c1, c2, c3 = trick
        best, top = 0, c0
        if (1 << c1) & suit and c1 > top:
            best, top = 1, c1
        if (1 << c2) & suit and c2 > top:
            best, top = 2, c2
        if (1 << c3) & suit and c3 > top:
            best = 3
        leader = seat = (leader + best) & 3
        taken[seat] |= (1 << c0) | (1 << c1) | (1 << c2) | (1 << c3)
        if not unplayed & POINT_CARDS:
            return taken, played  # every point card is taken: the rest cannot change the score
        trick = []
        suit = 0
        first_trick = False
        if watch:
            runner = watched(taken)


def strict_moves(hand: int, suit: int, first_trick: bool, broken: bool) -> int:
    """What the standard rules let a seat holding ``hand`` play: ``suit`` is the mask of the suit
    led (0: the seat leads), as ``Hand.legal_plays`` says (the ISMCTS sparring partner's walk;
    ``play_out`` inlines the same, and tests hold both to the rules engine)."""
    if suit:
        legal = hand & suit
        if not legal:
            legal = (hand & _NOT_POINTS or hand) if first_trick else hand
        return legal
    if first_trick:
        return 1  # the 2 of clubs opens the hand
    if broken:
        return hand
    return hand & _NOT_HEARTS or hand


def watched(taken: list[int]) -> int:
    """The seat the others block: the only one with point cards, if it has enough of them."""
    runner = -1
    for s in range(4):
        if taken[s] & POINT_CARDS:
            if runner >= 0:
                return -1
            runner = s
    if runner >= 0 and points_in(taken[runner]) < MOON_WATCH_POINTS:
        return -1
    return runner


_SUIT_CARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(13 * s + r for r in range(13) if m >> r & 1) for m in range(1 << 13))
    for s in range(4)
)


def cards_of(mask: int) -> list[int]:
    """The cards of a set, low to high, in four table lookups."""
    t = _SUIT_CARDS
    return [
        *t[0][mask & 0x1FFF],
        *t[1][mask >> 13 & 0x1FFF],
        *t[2][mask >> 26 & 0x1FFF],
        *t[3][mask >> 39 & 0x1FFF],
    ]
