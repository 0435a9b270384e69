"""Playing a sampled deal to the end of the hand, fast, through the rules engine.

The engine's ``Hand`` is the only judge of legality: a playout asks it for the legal set and
plays through it. The policy is ``policy.choose``; a single legal card is played without asking.
"""

from __future__ import annotations

from collections.abc import Callable

from server.rules import POINT_CARDS, Hand, points_in

from .policy import MOON_WATCH_POINTS, choose


def play_out(
    h: Hand,
    shooter: int = -1,
    block: bool = True,
    me: int = -1,
    noise: float = 0.0,
    rand: Callable[[], float] | None = None,
) -> None:
    """Play the hand on in place until the points are settled: the end of the hand, or earlier
    once every point card has been taken (``h.taken`` then holds the result).

    Every seat plays the policy; ``shooter`` (if any) goes for the moon. With ``block`` the
    others block a seat running for the moon, as the basic bot does: the shooter from the start,
    else any seat that has taken every point so far and at least ``MOON_WATCH_POINTS``.

    The opponent model: with ``noise`` (and ``rand``), each seat other than ``me`` plays, with
    that chance at each choice, another of its legal cards at random instead of the policy's.
    Real opponents are not this policy; a search that expects them to be exploits habits they
    may not have (and reads their cards as if they had them), so it hedges.
    """
    hands = h.hands  # the engine updates this list in place
    taken = h.taken
    legal_plays = h.legal_plays
    play = h.play
    runner = shooter if block else -1
    watch = block and shooter < 0
    unplayed = hands[0] | hands[1] | hands[2] | hands[3]
    while True:
        seat = h.turn
        if seat < 0:
            return
        legal = legal_plays(seat)
        if legal & (legal - 1):
            if noise and seat != me and rand is not None and rand() < noise:
                cards = cards_of(legal)
                card = cards[int(rand() * len(cards))]
            else:
                card = choose(
                    seat, hands[seat], legal, unplayed, h.trick, h.leader, runner, seat == shooter
                )
        else:
            card = legal.bit_length() - 1
        unplayed ^= 1 << card
        if play(seat, card) >= 0:
            if not unplayed & POINT_CARDS:
                return  # every point card is taken: the rest cannot change the score
            if watch:
                runner = watched(taken)


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
