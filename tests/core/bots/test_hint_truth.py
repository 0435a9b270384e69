"""Hints tell the truth: every reason ``explain_play`` gives is checked against the position by
an independent reading of it, on crafted positions (one per reason kind) and on every legal
card of thousands of random positions, with and without a moon runner or a shooting search."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from protocol.cards import parse_card
from server.core.bots.explain import (
    RANK_WORDS,
    card_words,
    explain_moon,
    explain_pass,
    explain_play,
    seat_words,
)
from server.core.bots.knowledge import Knowledge, knowledge_of
from server.core.bots.outcome import moon_points
from server.core.room.game_view import game_view
from server.core.rules import HEARTS_MASK, SUIT_MASKS, Game, Rules, deal_from_deck
from tests.core.bots.test_bots_crafted import (
    DUCK_HANDS,
    DUCK_PLAYS,
    MOON_HANDS,
    MOON_PLAYS,
    QUEEN_HANDS,
    QUEEN_PLAYS,
    game_at,
)

QS = 36
SUITS = ("clubs", "diamonds", "spades", "hearts")
Check = Callable[[Knowledge, int, int, re.Match[str]], bool]


def _suit(card: int) -> int:
    return card // 13


def _top(k: Knowledge) -> int:
    """The card winning the trick in progress (by its own reading, not explain's)."""
    led = _suit(k.trick[0])
    return max(c for c in k.trick if _suit(c) == led)


def _follows(k: Knowledge, card: int) -> bool:
    return bool(k.trick) and _suit(card) == _suit(k.trick[0])


def _wins_now(k: Knowledge, card: int) -> bool:
    if k.trick:
        return _follows(k, card) and card > _top(k)
    higher = SUIT_MASKS[_suit(card)] & ~((2 << card) - 1)
    return not k.unseen & higher


def _seat_of_top(k: Knowledge) -> int:
    return (k.leader + k.trick.index(_top(k))) & 3


def _out_of(k: Knowledge, suit_name: str) -> bool:
    return not k.hand & SUIT_MASKS[SUITS.index(suit_name)]


def _empties(k: Knowledge, card: int, suit_name: str) -> bool:
    suit = SUITS.index(suit_name)
    return _suit(card) == suit and not k.hand & SUIT_MASKS[suit] & ~(1 << card)


def _is_point(card: int) -> bool:
    return card == QS or bool((1 << card) & HEARTS_MASK)


def _word_card(words: str) -> int:
    rank, _, suit = words.partition(" of ")
    return SUITS.index(suit) * 13 + RANK_WORDS.index(rank)


# Each reason kind: its pattern, and what must be true of the position for it to be said.
REASONS: dict[str, tuple[str, Check]] = {
    "only": (r"is your only legal card$", lambda k, legal, c, m: legal.bit_count() == 1),
    "shoot": (r"keeps taking tricks to shoot the moon$", lambda k, legal, c, m: _wins_now(k, c)),
    "stop_moon": (
        r"takes (the queen|a heart) so (.+) cannot shoot the moon$",
        lambda k, legal, c, m: (
            _follows(k, c)
            and c > _top(k)
            and (
                QS in k.trick
                if m[1] == "the queen"
                else _is_point(c) or any(map(_is_point, k.trick))
            )
            and m[2] != "you"
        ),
    ),
    "keep_away": (
        r"keeps points away from (.+), who is going for the moon$",
        lambda k, legal, c, m: (
            bool(k.trick)
            and not _follows(k, c)
            and not _is_point(c)
            and seat_words(k.seat, _seat_of_top(k)) == m[1]
        ),
    ),
    "dump_queen": (
        r"dumps the queen of spades on a trick (.+) is winning while you are out of (\w+)$",
        lambda k, legal, c, m: (
            c == QS
            and bool(k.trick)
            and not _follows(k, c)
            and seat_words(k.seat, _seat_of_top(k)) == m[1]
            and _out_of(k, m[2])
        ),
    ),
    "discard": (
        r"gets rid of the (\w+ of \w+)(?:, which could catch the queen,)? while you are out of "
        r"(\w+)$",
        lambda k, legal, c, m: (
            _word_card(m[1]) == c and not _follows(k, c) and bool(k.trick) and _out_of(k, m[2])
        ),
    ),
    "high_discard": (
        r"gets rid of a high card while you are out of (\w+)$",
        lambda k, legal, c, m: bool(k.trick) and not _follows(k, c) and _out_of(k, m[1]),
    ),
    "empties": (
        r"empties your (\w+) so you can discard .+ later$",
        lambda k, legal, c, m: _empties(k, c, m[1]),
    ),
    "duck": (
        r"ducks under the (\w+ of \w+) on the table$",
        lambda k, legal, c, m: _follows(k, c) and c < _top(k) and _word_card(m[1]) == _top(k),
    ),
    "first_club": (
        r"plays a high club on the first trick, where no points can be played$",
        lambda k, legal, c, m: not k.tricks and _follows(k, c) and _suit(c) == 0 and c > _top(k),
    ),
    "free_trick": (
        r"takes a trick with no points in it and gets rid of the (\w+ of \w+)$",
        lambda k, legal, c, m: (
            len(k.trick) == 3
            and _follows(k, c)
            and c > _top(k)
            and not any(map(_is_point, k.trick))
            and _word_card(m[1]) == c
        ),
    ),
    "cannot_duck": (
        r"cannot duck the (\w+ of \w+)(?:, so it gets rid of your highest one|; a later player "
        r"may still go higher)$",
        lambda k, legal, c, m: (
            _follows(k, c)
            and _word_card(m[1]) == _top(k)
            and not legal & SUIT_MASKS[_suit(c)] & ((1 << _top(k)) - 1)
        ),
    ),
    "force_queen": (
        r"leads a low spade to force out the queen of spades$",
        lambda k, legal, c, m: (
            not k.trick and _suit(c) == 2 and c < QS and bool(k.unseen & (1 << QS))
        ),
    ),
    "low_lead": (
        r"leads a low (\w+) that the others will likely beat$",
        lambda k, legal, c, m: (
            not k.trick
            and SUITS[_suit(c)].startswith(m[1])
            and (k.unseen & SUIT_MASKS[_suit(c)] & ~((2 << c) - 1)).bit_count() >= 3
        ),
    ),
    "fewest": (r"costs the fewest points in the simulated deals$", lambda k, legal, c, m: True),
}


def check_reason(k: Knowledge, legal: int, card: int, reason: str) -> str:
    """The kind of ``reason``; fails the test if the position does not bear it out."""
    for kind, (pattern, holds) in REASONS.items():
        m = re.fullmatch(pattern, reason)
        if m:
            assert holds(k, legal, card, m), f"{reason!r} is false for {card_words(card)}"
            return kind
    raise AssertionError(f"a reason no check knows: {reason!r}")


def _position(hands: list[str], plays: str) -> tuple[Knowledge, int]:
    game = game_at(hands, plays)
    k = knowledge_of(game_view(game, 0))
    return k, game.legal_plays(0)


def test_a_shooting_search_does_not_call_a_duck_a_moon_play() -> None:
    """The reported bug: "keeps taking tricks to shoot the moon" for a six that ducks."""
    k, legal = _position(DUCK_HANDS, DUCK_PLAYS)
    ten = parse_card("TD")
    reason = explain_play(k, legal, ten, -1, shooting=True)
    assert "moon" not in reason and check_reason(k, legal, ten, reason) == "duck"
    king = parse_card("KD")
    reason = explain_play(k, legal, king, -1, shooting=True)
    assert check_reason(k, legal, king, reason) == "shoot"


CRAFTED = {
    # kind: (hands, plays, card, runner, shooting)
    "duck": (DUCK_HANDS, DUCK_PLAYS, "TD", -1, False),
    "shoot": (DUCK_HANDS, DUCK_PLAYS, "AD", -1, True),
    "dump_queen": (QUEEN_HANDS, QUEEN_PLAYS, "QS", -1, False),
    "discard": (QUEEN_HANDS, QUEEN_PLAYS, "8H", -1, False),
    "stop_moon": (MOON_HANDS, MOON_PLAYS, "9H", 3, False),
    "cannot_duck": (DUCK_HANDS, "2C KC 3C 4C 8D TS", "9D", -1, False),
    "first_club": (
        [
            "4C 5C AC 9D TD KD AD 2S 3S 4S 2H 3H 4H",
            *DUCK_HANDS[1:3],
            "3C JC QC 6C TS JS QS KS AS 5H QH KH AH",
        ],
        "2C KC 3C",
        "AC",
        -1,
        False,
    ),
}


@pytest.mark.parametrize("kind", sorted(CRAFTED))
def test_each_reason_kind_on_a_crafted_position(kind: str) -> None:
    hands, plays, name, runner, shooting = CRAFTED[kind]
    k, legal = _position(hands, plays)
    card = parse_card(name)
    assert legal >> card & 1, f"{name} is not legal here"
    reason = explain_play(k, legal, card, runner, shooting)
    assert check_reason(k, legal, card, reason) == kind, reason


def test_every_reason_holds_on_random_positions() -> None:
    """Every legal card of every position of 60 random hands, read every way explain can be
    asked (no runner or each other seat as the runner; shooting or not): no false reason."""
    rng = random.Random(13)
    kinds: set[str] = set()
    for _ in range(60):
        game = Game(Rules())
        game.hand_number = 3  # no pass
        deck = list(range(52))
        rng.shuffle(deck)
        game.start_hand(deal_from_deck(deck))
        for _ in range(52):
            assert game.hand is not None and game.hand.turn is not None
            seat = game.hand.turn
            k = knowledge_of(game_view(game, seat))
            legal = game.legal_plays(seat)
            for card in (c for c in range(52) if legal >> c & 1):
                for runner in (-1, *((seat + d) & 3 for d in (1, 2, 3))):
                    for shooting in (False, True):
                        reason = explain_play(k, legal, card, runner, shooting)
                        kinds.add(check_reason(k, legal, card, reason))
            cards = [c for c in range(52) if legal >> c & 1]
            game.play(seat, rng.choice(cards))
    # The random hands reach most kinds; the crafted positions cover the rest.
    assert len(kinds) >= 10, kinds


# --- the pass and the moon choice ------------------------------------------------------------

RANK_OF = {w: i for i, w in enumerate(RANK_WORDS)}


PASS_REASONS = (
    r"passes the queen of spades, which has too few low spades to hide behind",
    r"passes the queen of spades so she cannot cost you 13",
    r"gets rid of the (?P<big>ace|king) of spades, which could catch the queen",
    r"empties your (?P<suit>clubs|diamonds) so you can discard "
    r"(?P<later>the queen|hearts and the queen) later",
    r"passes high hearts that could take tricks full of points",
    r"passes high cards that have few low cards to cover them",
    r"passes the cards the simulated deals found costliest to keep",
)


def _pass_parts(reason: str) -> list[re.Match[str]]:
    """The one or two reasons joined by " and ", each matched to its pattern."""
    for first in PASS_REASONS:
        m = re.match(first, reason)
        if not m:
            continue
        rest = reason[m.end() :]
        if not rest:
            return [m]
        for second in PASS_REASONS:
            m2 = re.fullmatch(" and " + second, rest)
            if m2:
                return [m, re.fullmatch(second, rest[5:])]  # type: ignore[list-item]
    raise AssertionError(f"a pass reason no check knows: {reason!r}")


def _pass_reason_holds(hand: int, cards: int, reason: str) -> None:
    kept = hand & ~cards
    low_spades = (hand & SUIT_MASKS[2] & ((1 << QS) - 1)).bit_count()
    for m in _pass_parts(reason):
        part = m[0]
        if part.startswith("passes the queen of spades, which"):
            assert cards >> QS & 1 and low_spades < 3, reason
        elif part.startswith("passes the queen of spades so"):
            assert cards >> QS & 1, reason
        elif m.re.pattern == PASS_REASONS[2]:
            assert cards >> (26 + RANK_OF[m["big"]]) & 1 and not kept >> QS & 1, reason
        elif m.re.pattern == PASS_REASONS[3]:
            suit = SUITS.index(m["suit"])
            assert hand & SUIT_MASKS[suit] and not kept & SUIT_MASKS[suit], reason
            assert (m["later"] == "the queen") == bool(kept >> QS & 1), reason
        elif part.startswith("passes high hearts"):
            assert any(cards >> c & 1 for c in range(48, 52)), reason  # jack of hearts or higher
        elif part.startswith("passes high cards"):
            for c in (c for c in range(52) if cards >> c & 1):
                lower = kept & SUIT_MASKS[c // 13] & ((1 << c) - 1)
                assert c % 13 >= 7 and lower.bit_count() <= 2, reason


def test_every_pass_reason_holds_on_random_hands() -> None:
    """Random three-card passes from random hands (the bot's own passes are among them)."""
    rng = random.Random(7)
    for _ in range(400):
        deck = list(range(52))
        rng.shuffle(deck)
        game = Game(Rules())
        game.start_hand(deal_from_deck(deck))
        k = knowledge_of(game_view(game, 0))
        mine = [c for c in range(52) if k.hand >> c & 1]
        for picked in (rng.sample(mine, 3), mine[-3:]):
            cards = sum(1 << c for c in picked)
            _pass_reason_holds(k.hand, cards, explain_pass(k, cards))


def test_every_moon_reason_holds() -> None:
    rules = Rules(target=50)
    rng = random.Random(3)
    for _ in range(2000):
        scores = [rng.randrange(0, 50) for _ in range(4)]
        for choice in ("others_26", "shooter_minus_26"):
            reason = explain_moon(0, scores, rules, choice)
            pts = moon_points(0, choice)
            new = [scores[s] + pts[s] for s in range(4)]
            over, lowest = max(new) >= rules.target, new[0] == min(new)
            other = "shooter_minus_26" if choice == "others_26" else "others_26"
            alt = [scores[s] + moon_points(0, other)[s] for s in range(4)]
            if reason == "ends the game with you on the lowest score":
                assert over and lowest
            elif reason == "does not end the game while someone else has a lower score":
                assert not over and max(alt) >= rules.target and alt[0] != min(alt)
            elif reason == "brings the end of the game nearer while you have the lowest score":
                assert choice == "others_26" and lowest
            elif reason == "keeps the game going while you are behind":
                assert choice == "shooter_minus_26" and not over and not lowest
            else:
                assert reason in (
                    "adds 26 to each of the others and leaves your own score as it is",
                    "takes 26 off your own score",
                ), reason
