"""What the play says about the other hands' suit lengths: the pass's weights (``pass_prior``)
times the play's, for each deal of the unseen cards.

A seat's leads and discards say how long it is in a suit: one that has shed two hearts on other
suits' tricks is three times as likely as the walks' deals say to hold no heart more, one that
has led spades twice is likely long in them. ``play_table.py`` holds, for each ``PlayKey`` (a
hand with a pass or not, how far the hand is, the suit, how often the seat led it and shed it),
how much more often a seat held each length of the suit now than the walks' own deals (weighed
by the pass and the queen's doubt) gave it, over hands played by a mixed field of styles and
searches (``load_tests.play_lengths``). The walks multiply those weights into the pass's: a
length now is the length after the pass less the cards of the suit the seat has played.
"""

from __future__ import annotations

from server.rules import SUIT_MASKS

from .knowledge import Knowledge
from .pass_prior import LENGTHS, LengthPrior, length_prior
from .play_table import PLAY_WEIGHTS

PlayKey = tuple[int, int, int, int, int]  # pass, stage, suit, leads (0-2), sheds (0-2)
Events = tuple[list[list[int]], list[list[int]]]
STAGE_TRICKS = 3  # tricks a stage of the hand: 0-2, 3-5, 6-8, 9-12 done


def play_events(k: Knowledge) -> Events:
    """For each seat and suit, how often the seat led it (after the first trick, whose lead is
    forced) and shed it (played it to a trick of another suit)."""
    leads = [[0] * 4 for _ in range(4)]
    sheds = [[0] * 4 for _ in range(4)]
    sequences = [(t[0], list(t[1:])) for t in k.tricks]
    if k.trick:
        sequences.append((k.leader, list(k.trick)))
    for number, (leader, cards) in enumerate(sequences):
        led = cards[0] // 13
        for i, card in enumerate(cards):
            seat = (leader + i) & 3
            if i == 0:
                if number:
                    leads[seat][led] += 1
            elif card // 13 != led:
                sheds[seat][card // 13] += 1
    return leads, sheds


def play_key(k: Knowledge, seat: int, suit: int, events: Events | None = None) -> PlayKey:
    """The table's key for ``seat``'s length of ``suit`` in ``k``."""
    leads, sheds = events if events is not None else play_events(k)
    stage = min(len(k.tricks) // STAGE_TRICKS, 3)
    passed = int(bool(k.direction and k.received))
    return passed, stage, suit, min(leads[seat][suit], 2), min(sheds[seat][suit], 2)


def deal_weights(
    k: Knowledge, table: dict[PlayKey, tuple[float, ...]] | None = None
) -> LengthPrior:
    """The pass's weights for ``k`` (all 1 without a pass) times the play's (``table``, by
    default ``play_table``'s), for the walks' deals."""
    rows = PLAY_WEIGHTS if table is None else table
    base = length_prior(k)
    weights = list(base.weights) if base is not None else [1.0] * (4 * 4 * LENGTHS)
    events = play_events(k)
    for s in range(4):
        if s == k.seat:
            continue
        for suit in range(4):
            row = rows.get(play_key(k, s, suit, events))
            if row is None:
                continue
            gone = (k.played_by[s] & SUIT_MASKS[suit]).bit_count()
            at = s * 56 + suit * LENGTHS
            for held in range(gone, LENGTHS):
                weights[at + held] *= row[held - gone]
    played = k.played_by
    return LengthPrior((played[0], played[1], played[2], played[3]), tuple(weights))
