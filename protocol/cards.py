"""Card names and the card numbering shared by the wire, the shuffle and the rules engine.

A card is an int 0..51: ``suit * 13 + rank``. Suits in order clubs, diamonds, spades, hearts
(0..3); ranks 2..A (0..12). This order is also the display order (clubs, diamonds, spades,
hearts, each low to high) and the starting order of the deck before the shuffle. A set of cards
is an int with bit ``card`` set for each card in it.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "23456789TJQKA"
SUITS = "CDSH"
DECK_SIZE = 52

CLUBS, DIAMONDS, SPADES, HEARTS = range(4)

_NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
_INDEX: dict[str, int] = {name: i for i, name in enumerate(_NAMES)}


def card_name(card: int) -> str:
    """``card_name(0) == "2C"``; ``card_name(36) == "QS"``."""
    return _NAMES[card]


def parse_card(name: str) -> int:
    """The card named ``name`` (case-sensitive, e.g. ``"TH"``); ValueError if it names none."""
    try:
        return _INDEX[name]
    except (KeyError, TypeError):
        raise ValueError(f"not a card name: {name!r}") from None


def is_card_name(name: object) -> bool:
    return isinstance(name, str) and name in _INDEX


def suit_of(card: int) -> int:
    return card // 13


def rank_of(card: int) -> int:
    return card % 13


def cards_in(mask: int) -> list[int]:
    """The cards of a set, in display order (clubs, diamonds, spades, hearts; low to high)."""
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def names_of(mask: int) -> list[str]:
    return [_NAMES[c] for c in cards_in(mask)]


def mask_of_names(names: Iterable[str]) -> int:
    return mask_of(parse_card(n) for n in names)
