"""The rule-based bot: the beginner tips, played soundly, and no look-ahead.

Passing scores each card by the trouble it brings (an unguarded queen of spades, the ace and king
of spades without her, high cards without low cover, the last cards of a short suit) and passes
the three worst. Playing is ``policy.choose`` with one piece of table sense added: a seat that has
taken every point so far, and enough of them, is treated as running for the moon, so the bot
takes a heart from it when it can.
"""

from __future__ import annotations

from server.core.rules import SUIT_MASKS

from .knowledge import Knowledge
from .playout import watched
from .policy import choose

QUEEN = 36
KING_SPADES, ACE_SPADES = 37, 38


def pass_scores(hand: int) -> dict[int, float]:
    """How much each card of a 13-card hand wants to be passed (higher: pass it first)."""
    scores: dict[int, float] = {}
    spades = hand & SUIT_MASKS[2]
    low_spades = (spades & ((1 << QUEEN) - 1)).bit_count()
    has_queen = bool(hand >> QUEEN & 1)
    queen_guarded = has_queen and low_spades >= 3
    hearts = hand & SUIT_MASKS[3]
    low_hearts = (hearts & ((1 << (39 + 5)) - 1)).bit_count()  # 2H..6H
    for suit in range(4):
        cards = hand & SUIT_MASKS[suit]
        length = cards.bit_count()
        low_cover = (cards & ((1 << (13 * suit + 6)) - 1)).bit_count()  # 2..7 of the suit
        c = cards
        while c:
            bit = c & -c
            c ^= bit
            card = bit.bit_length() - 1
            rank = card - 13 * suit  # 0 = two .. 12 = ace
            if card == QUEEN:
                score = -40.0 if queen_guarded else 120.0
            elif card in (KING_SPADES, ACE_SPADES):
                if queen_guarded:
                    score = 5.0 + rank
                elif low_spades <= 2:
                    score = 95.0 + rank  # they catch the queen
                elif low_spades == 3:
                    score = 45.0 + rank
                else:
                    score = 10.0 + rank
            elif suit == 2:
                score = rank - 20.0  # low spades guard against the queen: keep them
            elif suit == 3:
                score = 4.0 * rank - 6.0 * low_hearts + (15.0 if rank >= 9 else -10.0)
            else:
                score = 3.0 * rank - 4.0 * low_cover
                if length <= 2:
                    score += 25.0  # passing them leaves a void to discard into
                elif length == 3:
                    score += 8.0
                if card == 0:
                    score -= 30.0  # the 2 of clubs costs nothing to keep
            scores[card] = score
    return scores


def basic_pass(hand: int) -> int:
    """The three cards to pass, as a mask."""
    scores = pass_scores(hand)
    ranked = sorted(scores, key=lambda c: (-scores[c], -c))
    return (1 << ranked[0]) | (1 << ranked[1]) | (1 << ranked[2])


def watched_runner(k: Knowledge) -> int:
    """Another seat that has every point taken so far and enough to be dangerous, or -1."""
    runner = watched(k.taken)
    return -1 if runner == k.seat else runner


def basic_play(k: Knowledge, legal: int) -> int:
    """The card to play from ``legal`` (the standard rules' legal set, several cards or one)."""
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    unplayed = ((1 << 52) - 1) & ~k.played
    leader = k.leader if k.trick else k.seat
    return choose(k.seat, k.hand, legal, unplayed, k.trick, leader, watched_runner(k))
