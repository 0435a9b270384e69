"""The Hearts rules engine: pure, synchronous, deterministic, the only judge of legality.

    from server.core.rules import Game, Rules, deal_from_deck
    game = Game(Rules(target=100))
    game.start_hand(deal_from_deck(deck))      # deck: the 52 cards in dealt order
    game.pass_cards(seat, mask_of_names(["QS", "AS", "KS"]))
    game.legal_plays(seat)                     # a set of cards as a bitmask
    game.play(seat, parse_card("2C"))          # raises IllegalMove(code, message) if refused

See README "Using the rules engine".
"""

from protocol.cards import (
    card_name,
    cards_in,
    mask_of,
    mask_of_names,
    names_of,
    parse_card,
)

from .errors import IllegalMove
from .game import Game, Phase
from .hand import (
    HEARTS_MASK,
    POINT_CARDS,
    QUEEN_OF_SPADES,
    SUIT_MASKS,
    TWO_OF_CLUBS,
    Hand,
    HandPhase,
    PassDirection,
    points_in,
    trick_winner,
)
from .options import Moon, Revokes, Rules, Tie


def deal_from_deck(deck: list[int]) -> list[int]:
    """Seat ``s`` gets ``deck[13*s : 13*s + 13]``; returns the four hands as card sets."""
    if sorted(deck) != list(range(52)):
        raise ValueError("a deck is the 52 cards 0..51, each once")
    return [mask_of(deck[13 * s : 13 * s + 13]) for s in range(4)]


__all__ = [
    "HEARTS_MASK",
    "POINT_CARDS",
    "QUEEN_OF_SPADES",
    "SUIT_MASKS",
    "TWO_OF_CLUBS",
    "Game",
    "Hand",
    "HandPhase",
    "IllegalMove",
    "Moon",
    "PassDirection",
    "Phase",
    "Revokes",
    "Rules",
    "Tie",
    "card_name",
    "cards_in",
    "deal_from_deck",
    "mask_of",
    "mask_of_names",
    "names_of",
    "parse_card",
    "points_in",
    "trick_winner",
]
