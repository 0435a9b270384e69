"""Playing a sampled deal to the end of the hand, fast, through the rules engine.

The engine's ``Hand`` is the only judge of legality: a playout asks it for the legal set and
plays through it. The policy is ``policy.choose``; a single legal card is played without asking.
"""

from __future__ import annotations

from server.rules import POINT_CARDS, Hand

from .policy import choose


def play_out(h: Hand, runner: int = -1, block: bool = True) -> None:
    """Play the hand on in place, every seat playing the policy (``runner`` shooting; the others
    blocking it unless ``block`` is False), until the points are settled: the end of the hand,
    or earlier once every point card has been taken. ``h.taken`` then holds the result."""
    hands = h.hands  # the engine updates this list in place
    legal_plays = h.legal_plays
    play = h.play
    while True:
        seat = h.turn
        if seat < 0:
            return
        legal = legal_plays(seat)
        if legal & (legal - 1):
            card = choose(
                seat,
                hands[seat],
                legal,
                hands[0] | hands[1] | hands[2] | hands[3],
                h.trick,
                h.leader,
                runner,
                block,
            )
        else:
            card = legal.bit_length() - 1
        if play(seat, card) >= 0 and not (hands[0] | hands[1] | hands[2] | hands[3]) & POINT_CARDS:
            return  # every point card is taken: the rest of the hand cannot change the score
