"""``Hand.from_position``: a hand in play rebuilt from current holdings and the plays so far."""

from __future__ import annotations

import random

import pytest

from protocol.cards import cards_in
from server.core.rules import Hand, HandPhase, PassDirection, deal_from_deck


def random_hand_in_play(seed: int) -> list[Hand]:
    """Every position of one random legal hand (after a random pass), start to end."""
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    hand = Hand.deal(deal_from_deck(deck), PassDirection(seed % 4))
    if hand.phase is HandPhase.PASSING:
        for seat in range(4):
            hand.choose_pass(seat, sum(1 << c for c in rng.sample(cards_in(hand.hands[seat]), 3)))
    positions = [hand.copy()]
    while not hand.is_over:
        hand.play(hand.turn, rng.choice(cards_in(hand.legal_plays(hand.turn))))
        positions.append(hand.copy())
    return positions


@pytest.mark.parametrize("seed", range(8))
def test_from_position_rebuilds_every_position_of_a_real_hand(seed: int) -> None:
    for real in random_hand_in_play(seed):
        rebuilt = Hand.from_position(real.hands, real.tricks, real.trick)
        for name in ("hands", "trick", "tricks", "taken", "hearts_broken", "leader", "turn"):
            assert getattr(rebuilt, name) == getattr(real, name), name
        assert rebuilt.phase is real.phase
        if not real.is_over:
            assert rebuilt.legal_plays(rebuilt.turn) == real.legal_plays(real.turn)


def test_a_rebuilt_position_plays_on_like_the_real_one() -> None:
    positions = random_hand_in_play(11)
    real = positions[20]
    rebuilt = Hand.from_position(real.hands, real.tricks, real.trick)
    rng = random.Random(3)
    while not real.is_over:
        card = rng.choice(cards_in(real.legal_plays(real.turn)))
        assert real.play(real.turn, card) == rebuilt.play(rebuilt.turn, card)
    assert rebuilt.taken == real.taken and rebuilt.points() == real.points()


def test_a_rebuilt_position_round_trips_through_its_stored_value() -> None:
    real = random_hand_in_play(5)[30]
    rebuilt = Hand.from_position(real.hands, real.tricks, real.trick)
    again = Hand.from_value(rebuilt.to_value())
    assert again.hands == real.hands and again.turn == real.turn and again.taken == real.taken


def test_first_trick_leader_is_found_from_the_card_counts() -> None:
    real = random_hand_in_play(2)
    for position in real[:4]:  # before the first lead and after one, two, three cards
        rebuilt = Hand.from_position(position.hands, position.tricks, position.trick)
        assert rebuilt.leader == position.leader and rebuilt.turn == position.turn


def test_revokes_allowed_positions_are_taken_as_given() -> None:
    real = random_hand_in_play(4)[9]
    rebuilt = Hand.from_position(real.hands, real.tricks, real.trick, revokes_allowed=True)
    if rebuilt.trick:
        # Following: every card in hand may be played at a revokes-allowed table.
        assert rebuilt.legal_plays(rebuilt.turn) == rebuilt.hands[rebuilt.turn]


def test_cards_that_do_not_add_up_are_refused() -> None:
    real = random_hand_in_play(7)[10]
    hands = list(real.hands)
    with pytest.raises(ValueError):
        Hand.from_position([hands[0], hands[0], hands[2], hands[3]], real.tricks, real.trick)
    moved = hands[0] & -hands[0]
    with pytest.raises(ValueError):  # one seat a card short, another a card over
        Hand.from_position(
            [hands[0] ^ moved, hands[1] | moved, hands[2], hands[3]], real.tricks, real.trick
        )
    with pytest.raises(ValueError):  # a played card still in a hand
        played = 1 << real.tricks[0][1]
        Hand.from_position([hands[0] | played, *hands[1:]], real.tricks, real.trick)


def test_a_trick_led_by_a_seat_that_did_not_win_the_last_is_refused() -> None:
    real = random_hand_in_play(6)[12]
    tricks = list(real.tricks)
    first = tricks[1]
    tricks[1] = ((first[0] + 1) & 3, *first[1:])
    with pytest.raises(ValueError):
        Hand.from_position(real.hands, tricks, real.trick)
