"""Playing a sampled deal to the end of the hand, fast, through the rules engine.

The engine's ``Hand`` is the only judge of legality: a playout asks it for the legal set and
plays through it. The policy is ``policy.choose``; a single legal card is played without asking.
"""

from __future__ import annotations

from server.rules import POINT_CARDS, Hand, points_in

from .policy import MOON_WATCH_POINTS, choose


def play_out(h: Hand, shooter: int = -1, block: bool = True) -> None:
    """Play the hand on in place until the points are settled: the end of the hand, or earlier
    once every point card has been taken (``h.taken`` then holds the result).

    Every seat plays the policy; ``shooter`` (if any) goes for the moon. With ``block`` the
    others block a seat running for the moon, as the basic bot does: the shooter from the start,
    else any seat that has taken every point so far and at least ``MOON_WATCH_POINTS``.
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
