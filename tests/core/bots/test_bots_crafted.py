"""Crafted positions for the bot tests (full deals and the plays leading to a decision), and a
check that each is a legal position."""

from __future__ import annotations

from typing import Any

from protocol.cards import mask_of_names, parse_card
from server.core.room.game_view import game_view
from server.core.rules import Game, Rules


def game_at(hands: list[str], plays: str, rules: Rules | None = None) -> Game:
    """A no-pass hand (hand 4) dealt ``hands`` (seat 0..3, 13 names each, space-separated),
    then the ``plays`` (space-separated names, in turn order from the 2 of clubs) made."""
    deal = [mask_of_names(h.split()) for h in hands]
    assert all(m.bit_count() == 13 for m in deal) and sum(deal) == (1 << 52) - 1
    game = Game(rules or Rules(target=100))
    game.hand_number = 3  # the next hand is the fourth: no pass
    game.start_hand(deal)
    for name in plays.split():
        game.play(game.hand.turn, parse_card(name))  # type: ignore[union-attr]
    return game


def view_at(hands: list[str], plays: str) -> dict[str, Any]:
    game = game_at(hands, plays)
    return game_view(game, game.hand.turn)  # type: ignore[union-attr]


# North (seat 0) third to a diamond trick with the queen of spades on it, holding cards under
# the jack and over it.
DUCK_HANDS = [
    "4C 5C 6C 9D TD KD AD 2S 3S 4S 2H 3H 4H",
    "2C 7C 8C 2D 3D 4D 5D 5S 6S 7S 6H 7H 8H",
    "KC 9C TC JD QD 6D 7D 8D 8S 9S 9H TH JH",
    "3C JC QC AC TS JS QS KS AS 5H QH KH AH",
]
DUCK_PLAYS = "2C KC 3C 4C JD QS"

# North out of diamonds with the queen of spades while West leads the king of diamonds.
QUEEN_HANDS = [
    "4C 5C 6C QS 2S 3S 2H 3H 4H 5H 6H 7H 8H",
    "2C 7C 8C 2D 3D 4D 5D 4S 5S 6S 9H TH JH",
    "KC 9C TC 6D 7D 8D 9D TD JD 7S 8S QH KH",
    "3C JC QC AC QD KD AD 9S TS JS KS AS AH",
]
QUEEN_PLAYS = "2C 9C AC 4C KD"

# West has taken every point so far (the queen and four hearts), holds only winners and leads
# the five of hearts. East and South showed on the ace of hearts that they have no hearts, so
# North, second to play, is the only one who can still take a heart from West: now or never.
MOON_HANDS = [
    "4C 2D 3D 2S 3S 4S 2H 3H 4H 6H 7H 8H 9H",
    "2C 5C 6C 4D 5D 6D 7D 8D 9D TD JD KS AS",
    "3C 7C 8C 9C TC QS 5S 6S 7S 8S 9S TS JS",
    "AC KC QC JC QD KD AD 5H TH JH QH KH AH",
]
MOON_PLAYS = "2C 3C AC 4C KC 2H 5C 7C AD 2D 4D QS QC 4H 6C 8C AH 6H 5D 5S 5H"


def test_the_crafted_positions_are_real_deals_played_legally_to_north_to_move() -> None:
    crafted = [(DUCK_HANDS, DUCK_PLAYS), (QUEEN_HANDS, QUEEN_PLAYS), (MOON_HANDS, MOON_PLAYS)]
    for hands, plays in crafted:
        game = game_at(hands, plays)  # raises IllegalMove if a play breaks a rule
        assert game.hand is not None and game.hand.turn == 0
