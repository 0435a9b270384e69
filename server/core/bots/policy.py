"""The fast card policy: what the basic bot plays and what every seat plays in a playout.

One function, ``choose``, picks a card from the legal set with a few integer operations on card
masks: duck as high as possible, win a clean last trick with the highest card, dump the queen of
spades and high hearts when out of the suit led, lead the lowest card least likely to win, lead
low spades to flush the queen out. It sees only what a seat at the table sees: its own cards, the
cards not yet played, the trick on the table and who is running for the moon.

A seat going for the moon (``shoots``) plays to take every trick. The others block a ``runner``
(a seat with every point taken so far, and enough of them): they take a trick with points from
it when they can and stop feeding it points.
"""

from __future__ import annotations

from server.core.rules import HEARTS_MASK, POINT_CARDS, SUIT_MASKS

QUEEN = 1 << 36
HIGH_SPADES = (1 << 37) | (1 << 38)  # king and ace: they catch the queen
LOW_SPADES = SUIT_MASKS[2] & ((1 << 36) - 1)  # 2S..JS: lose to the queen
NON_POINTS = ((1 << 52) - 1) & ~POINT_CARDS
MOON_WATCH_POINTS = 10  # points a seat must have taken, all of them, before others block its moon
CLUBS, DIAMONDS, SPADES, HEARTS = SUIT_MASKS


def highest_rank(mask: int, hand: int) -> int:
    """The card of highest rank in ``mask``; ties go to the suit we hold fewest of (a void)."""
    best = -1
    best_key = -1
    for s in (0, 1, 2, 3):
        m = mask & SUIT_MASKS[s]
        if m:
            top = m.bit_length() - 1
            # (rank, fewest held) as one integer: the hot path of every playout
            key = (top - 13 * s) * 16 + 15 - (hand & SUIT_MASKS[s]).bit_count()
            if key > best_key:
                best_key = key
                best = top
    return best


def choose(
    seat: int,
    mine: int,
    legal: int,
    unplayed: int,
    trick: list[int],
    leader: int,
    runner: int,
    shoots: bool = False,
) -> int:
    """The policy's card for ``seat`` holding ``mine`` with ``legal`` playable (several).

    ``runner`` is the seat the others are blocking (-1: none); ``shoots`` says this seat is
    going for the moon itself.
    """
    if shoots:
        return shoot_card(mine, legal, unplayed, trick)
    if runner == seat:
        runner = -1
    n = len(trick)
    if not n:
        return _lead(mine, legal, unplayed)
    led = trick[0] // 13
    suit = SUIT_MASKS[led]
    follow = legal & suit
    on_table = 0
    for c in trick:
        on_table |= 1 << c
    win = (on_table & suit).bit_length() - 1
    if follow:
        points = on_table & POINT_CARDS
        if runner >= 0:
            win_seat = (leader + trick.index(win)) & 3
            runner_to_play = (runner - leader) & 3 >= n
            if (win_seat == runner or runner_to_play) and (points or led == 3):
                top = follow.bit_length() - 1
                if top > win and top != 36:
                    return top  # take points away from the runner
        below = follow & ((1 << win) - 1)
        if n == 3 and not points:
            # Last to a clean trick: take it with the highest card, never the queen.
            safe = follow & ~QUEEN
            if safe:
                return safe.bit_length() - 1
        if below:
            return below.bit_length() - 1  # duck as high as possible
        if n < 3 and led == 2 and unplayed & QUEEN & ~mine:
            return (follow & -follow).bit_length() - 1  # the queen may still fall on this trick
        safe = follow & ~QUEEN
        return (safe or follow).bit_length() - 1
    # Out of the suit led: dump.
    if runner >= 0 and (leader + trick.index(win)) & 3 == runner:
        safe = legal & NON_POINTS
        if safe:
            return highest_rank(safe, mine)  # do not feed the runner
    if legal & QUEEN:
        return 36
    if unplayed & QUEEN:
        high = legal & HIGH_SPADES
        if high:
            return high.bit_length() - 1
    hearts = legal & HEARTS_MASK
    if hearts:
        return hearts.bit_length() - 1
    return highest_rank(legal, mine)


def _lead(mine: int, legal: int, unplayed: int) -> int:
    others = unplayed & ~mine
    if others & QUEEN and not mine & (QUEEN | HIGH_SPADES):
        low = legal & LOW_SPADES
        if low:
            return low.bit_length() - 1  # flush the queen out: her holder may have to play her
    # The key (cards that lose to ours + 20 if it is a spade over a queen still out, a heart
    # last, the suit the others hold most of) as one integer, lowest first.
    best = -1
    best_key = 1 << 30
    for s in (0, 1, 2, 3):
        m = legal & SUIT_MASKS[s]
        if not m:
            continue
        low = (m & -m).bit_length() - 1
        out = others & SUIT_MASKS[s]
        if not out:
            key = 50 * 1024  # nobody can follow: we would take it, and any points dumped on it
        else:
            below = (out & ((1 << low) - 1)).bit_count()  # cards that lose to ours
            if s == 2 and low >= 36 and others & QUEEN:
                below += 20
            key = below * 1024 + (512 if s == 3 else 0) + 13 - out.bit_count()
        if key < best_key:
            best_key = key
            best = low
    return best


def shoot_card(mine: int, legal: int, unplayed: int, trick: list[int]) -> int:
    others = unplayed & ~mine
    if not trick:
        # Lead a sure winner if there is one (nothing higher out), else the highest card.
        for s in (3, 2, 1, 0):
            m = legal & SUIT_MASKS[s]
            if m:
                top = m.bit_length() - 1
                if not others & SUIT_MASKS[s] & ~((1 << (top + 1)) - 1):
                    return top
        return highest_rank(legal, mine)
    suit = SUIT_MASKS[trick[0] // 13]
    follow = legal & suit
    if follow:
        top = follow.bit_length() - 1
        win = max(c for c in trick if (1 << c) & suit)
        return top if top > win else (follow & -follow).bit_length() - 1
    safe = legal & NON_POINTS
    return low_rank(safe or legal)


def low_rank(mask: int) -> int:
    best = -1
    best_rank = 99
    for s in (0, 1, 2, 3):
        m = mask & SUIT_MASKS[s]
        if m:
            low = (m & -m).bit_length() - 1
            if low - 13 * s < best_rank:
                best_rank = low - 13 * s
                best = low
    return best
