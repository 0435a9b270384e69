"""Why a bot chose its card, in a sentence a beginner understands (the hint's reason).

The reason is read off the position and the search: the card's role in the trick (ducking under
the card on the table, dumping the queen while out of the suit led, taking a heart from a seat
running for the moon), or what it does for later (emptying a suit). It never mentions hidden
cards: it is built from the same view the bot decided from.
"""

from __future__ import annotations

from server.core.rules import HEARTS_MASK, SUIT_MASKS, Rules

from .knowledge import Knowledge
from .outcome import moon_points

RANK_WORDS = (
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "jack", "queen", "king", "ace",
)  # fmt: skip
SUIT_WORDS = ("clubs", "diamonds", "spades", "hearts")
QUEEN = 36


def card_words(card: int) -> str:
    """``card_words(36) == "queen of spades"``."""
    return f"{RANK_WORDS[card % 13]} of {SUIT_WORDS[card // 13]}"


def seat_words(me: int, seat: int) -> str:
    """Where ``seat`` sits as ``me`` sees it: compass names are true from one side only."""
    return ("you", "the player on your left", "the player across", "the player on your right")[
        (seat - me) & 3
    ]


def _winning(trick: list[int]) -> int:
    led = trick[0] // 13
    return max(c for c in trick if c // 13 == led)


def explain_play(k: Knowledge, legal: int, card: int, runner: int, shooting: bool) -> str:
    """The reason for playing ``card`` (``runner``: a seat treated as running for the moon)."""
    bit = 1 << card
    suit = card // 13
    if not legal & (legal - 1):
        return "is your only legal card"
    trick = k.trick
    if shooting and _takes_the_lead(k, card):
        # Only a card that wins the trick as it stands keeps taking tricks.
        return "keeps taking tricks to shoot the moon"
    left_in_suit = k.hand & SUIT_MASKS[suit] & ~bit
    if trick:
        led = trick[0] // 13
        win = _winning(trick)
        win_seat = (k.leader + trick.index(win)) & 3
        points_on = any((1 << c) & (HEARTS_MASK | (1 << QUEEN)) for c in trick)
        if runner >= 0 and runner != k.seat:
            name = seat_words(k.seat, runner)
            if suit == led and card > win and (points_on or bit & HEARTS_MASK):
                what = "the queen" if any(c == QUEEN for c in trick) else "a heart"
                return f"takes {what} so {name} cannot shoot the moon"
            if suit != led and win_seat == runner and not bit & (HEARTS_MASK | (1 << QUEEN)):
                return f"keeps points away from {name}, who is going for the moon"
        if suit != led:
            out_of = SUIT_WORDS[led]
            if card == QUEEN:
                who = seat_words(k.seat, win_seat)
                return (
                    f"dumps the queen of spades on a trick {who} is winning "
                    f"while you are out of {out_of}"
                )
            if bit & HEARTS_MASK:
                return f"gets rid of the {card_words(card)} while you are out of {out_of}"
            if card in (37, 38) and k.queen_out:
                return (
                    f"gets rid of the {card_words(card)}, which could catch the queen, "
                    f"while you are out of {out_of}"
                )
            if not left_in_suit:
                return f"empties your {SUIT_WORDS[suit]} so you can discard {_later(k)} later"
            return f"gets rid of a high card while you are out of {out_of}"
        if card < win:
            return f"ducks under the {card_words(win)} on the table"
        if not k.tricks and suit == 0:
            return "plays a high club on the first trick, where no points can be played"
        if len(trick) == 3 and not points_on:
            return f"takes a trick with no points in it and gets rid of the {card_words(card)}"
        if not legal & ((1 << win) - 1) & SUIT_MASKS[led]:
            if card == (legal & SUIT_MASKS[led]).bit_length() - 1:
                return f"cannot duck the {card_words(win)}, so it gets rid of your highest one"
            return f"cannot duck the {card_words(win)}; a later player may still go higher"
        return "costs the fewest points in the simulated deals"
    # Leading.
    if suit == 2 and card < QUEEN and k.queen_out and not k.hand & (1 << QUEEN):
        return "leads a low spade to force out the queen of spades"
    if not left_in_suit and suit != 3:
        return f"empties your {SUIT_WORDS[suit]} so you can discard {_later(k)} later"
    others_higher = k.unseen & SUIT_MASKS[suit] & ~((1 << (card + 1)) - 1)
    if others_higher.bit_count() >= 3:
        return f"leads a low {SUIT_WORDS[suit][:-1]} that the others will likely beat"
    return "costs the fewest points in the simulated deals"


def _takes_the_lead(k: Knowledge, card: int) -> bool:
    """``card`` wins the trick as it stands: it follows and beats the card on top, or leads a
    suit in which nobody else can hold a higher card."""
    suit = card // 13
    if k.trick:
        return suit == k.trick[0] // 13 and card > _winning(k.trick)
    return not k.unseen & SUIT_MASKS[suit] & ~((1 << (card + 1)) - 1)


def _later(k: Knowledge) -> str:
    if k.hand & (1 << QUEEN):
        return "the queen"
    return "hearts or the queen" if k.queen_out else "hearts"


def explain_pass(k: Knowledge, cards: int) -> str:
    """The reason for passing ``cards`` (three of ``k.hand``)."""
    hand = k.hand
    reasons: list[str] = []
    low_spades = (hand & SUIT_MASKS[2] & ((1 << QUEEN) - 1)).bit_count()
    if cards & (1 << QUEEN):
        reasons.append(
            "passes the queen of spades, which has too few low spades to hide behind"
            if low_spades < 3
            else "passes the queen of spades so she cannot cost you 13"
        )
    big = cards & ((1 << 37) | (1 << 38))
    if big and not (hand & ~cards) & (1 << QUEEN):
        which = "ace" if big >> 38 & 1 else "king"
        reasons.append(f"gets rid of the {which} of spades, which could catch the queen")
    for suit in (0, 1):
        mine = hand & SUIT_MASKS[suit]
        if mine and not mine & ~cards:
            keeps_queen = (hand & ~cards) & (1 << QUEEN)
            later = "the queen" if keeps_queen else "hearts and the queen"
            reasons.append(f"empties your {SUIT_WORDS[suit]} so you can discard {later} later")
    if cards & HEARTS_MASK & ~((1 << 48) - 1):
        reasons.append("passes high hearts that could take tricks full of points")
    if not reasons:
        reasons.append(
            "passes high cards that have few low cards to cover them"
            if _uncovered_high(hand & ~cards, cards)
            else "passes the cards the simulated deals found costliest to keep"
        )
    return " and ".join(reasons[:2])


def _uncovered_high(kept: int, cards: int) -> bool:
    """Every passed card is a nine or higher with at most two lower cards of its suit kept."""
    for card in (c for c in range(52) if cards >> c & 1):
        lower_kept = kept & SUIT_MASKS[card // 13] & ((1 << card) - 1)
        if card % 13 < 7 or lower_kept.bit_count() > 2:
            return False
    return True


def explain_moon(seat: int, scores: list[int], rules: Rules, choice: str) -> str:
    """The reason for a moon choice under ``shooter_chooses`` (see ``outcome.choose_moon``)."""
    ends: dict[str, tuple[bool, bool]] = {}
    for option in ("others_26", "shooter_minus_26"):
        pts = moon_points(seat, option)
        new = [scores[s] + pts[s] for s in range(4)]
        ends[option] = (max(new) >= rules.target, new[seat] == min(new))
    over, lowest = ends[choice]
    other = "shooter_minus_26" if choice == "others_26" else "others_26"
    if over and lowest:
        return "ends the game with you on the lowest score"
    if not over and ends[other][0] and not ends[other][1]:
        return "does not end the game while someone else has a lower score"
    if choice == "others_26":
        if lowest:
            return "brings the end of the game nearer while you have the lowest score"
        return "adds 26 to each of the others and leaves your own score as it is"
    if not over and not lowest:
        return "keeps the game going while you are behind"
    return "takes 26 off your own score"
