"""Crafting deals for rules tests: name some seats' cards, the rest of the deck fills in."""

from __future__ import annotations

from protocol.cards import mask_of_names
from server.core.rules import Hand, PassDirection


def deal(*named: list[str] | None) -> list[int]:
    """Four hands: named seats keep those cards; the other cards fill the seats in deck order."""
    given = [mask_of_names(n) if n else 0 for n in named] + [0] * (4 - len(named))
    used = 0
    for m in given:
        assert not m & used, "a card was given to two seats"
        used |= m
    rest = [c for c in range(52) if not used >> c & 1]
    hands = []
    for m in given:
        while m.bit_count() < 13:
            m |= 1 << rest.pop(0)
        hands.append(m)
    return hands


def no_pass_hand(*named: list[str] | None, revokes_allowed: bool = False) -> Hand:
    return Hand.deal(deal(*named), PassDirection.NONE, revokes_allowed=revokes_allowed)


def play_names(hand: Hand, *names: str) -> None:
    """Play cards in turn order from whoever is to play."""
    from protocol.cards import parse_card

    for name in names:
        hand.play(hand.turn, parse_card(name))
