"""The search's fast playout plays exactly what the rules engine allows, card for card.

``server.core.bots.playout.play_out`` applies the standard rules inline for speed. Here the same
playouts run through the engine itself (``Hand.legal_plays`` and ``Hand.play`` pick the legal
set and resolve every trick) from random positions, every mode of the opponent model; the cards
played, who took what, and the number of cards must agree.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from server.core.bots.playout import cards_of, play_out, strict_moves, watched
from server.core.bots.policy import choose
from server.core.rules import POINT_CARDS, SUIT_MASKS, Hand, PassDirection, deal_from_deck
from tests.core.bots.test_bots import random_deal


def engine_play_out(
    h: Hand,
    shooter: int,
    block: bool,
    me: int,
    noise: float,
    rand: Callable[[], float] | None,
    first: int,
) -> tuple[list[int], int, list[int]]:
    """The reference: the same policy and opponent model, every rule the engine's own."""
    h = h.copy()
    watch = block and shooter < 0
    runner = watched(h.taken) if watch else shooter if block else -1
    unplayed = h.hands[0] | h.hands[1] | h.hands[2] | h.hands[3]
    order: list[int] = []
    while h.turn >= 0:
        seat = h.turn
        legal = h.legal_plays(seat)
        if first >= 0:
            card, first = first, -1
            assert legal >> card & 1
        elif legal & (legal - 1):
            if noise and seat != me and rand is not None and rand() < noise:
                cards = cards_of(legal)
                card = cards[int(rand() * len(cards))]
            else:
                card = choose(
                    seat, h.hands[seat], legal, unplayed, h.trick, h.leader, runner, seat == shooter
                )
        else:
            card = legal.bit_length() - 1
        unplayed ^= 1 << card
        order.append(card)
        if h.play(seat, card) >= 0:
            if not unplayed & POINT_CARDS:
                break
            if watch:
                runner = watched(h.taken)
    return list(h.taken), len(order), order


def random_position(rng: random.Random) -> Hand:
    deck = list(range(52))
    rng.shuffle(deck)
    if rng.random() < 0.3:
        # Clubs to two seats only: the others are out of clubs on the first trick, where points
        # may not be discarded.
        deck.sort(key=lambda c: (c >= 13, rng.random()))
        hands = [0, 0, 0, 0]
        for i, c in enumerate(deck):
            seat = rng.choice((0, 2)) if i < 13 else rng.randrange(4)
            while hands[seat].bit_count() == 13:
                seat = rng.randrange(4)
            hands[seat] |= 1 << c
        h = Hand.deal(hands, PassDirection.NONE)
    else:
        h = Hand.deal(deal_from_deck(deck), PassDirection.NONE)
    plays = rng.randrange(0, 4) if rng.random() < 0.4 else rng.randrange(0, 48)
    for _ in range(plays):
        legal = h.legal_plays(h.turn)
        h.play(h.turn, rng.choice(cards_of(legal)))
    return Hand.from_position(h.hands, h.tricks, h.trick)


@pytest.mark.parametrize("seed", range(6))
def test_the_fast_playout_matches_the_engine_card_for_card(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        h = random_position(rng)
        shooter = rng.choice((-1, -1, 0, 1, 2, 3))
        block = rng.random() < 0.7
        me = rng.randrange(4)
        noise = rng.choice((0.0, 0.15, 0.5))
        legal = h.legal_plays(h.turn)
        first = rng.choice(cards_of(legal)) if rng.random() < 0.5 else -1
        before = (list(h.hands), list(h.taken), list(h.trick), list(h.tricks))
        draw = random.Random(seed).random
        want_taken, want_played, _ = engine_play_out(h, shooter, block, me, noise, draw, first)
        draw = random.Random(seed).random
        got_taken, got_played = play_out(h, shooter, block, me, noise, draw, first)
        assert (got_taken, got_played) == (want_taken, want_played)
        assert (list(h.hands), list(h.taken), list(h.trick), list(h.tricks)) == before


def test_a_playout_from_the_first_lead_of_the_hand_opens_with_the_two_of_clubs() -> None:
    deck = list(range(52))
    random.Random(3).shuffle(deck)
    h = Hand.deal(deal_from_deck(deck), PassDirection.NONE)
    taken, played = play_out(h)
    want_taken, want_played, order = engine_play_out(h, -1, True, -1, 0.0, None, -1)
    assert order[0] == 0 and (taken, played) == (want_taken, want_played)
    assert sum(t.bit_count() for t in taken) == played  # whole tricks only


def test_the_pass_search_meets_the_opponent_models_random_plays() -> None:
    from server.core.bots.basic import basic_pass
    from server.core.bots.knowledge import knowledge_of
    from server.core.bots.search import _trial_pass
    from server.core.room.game_view import game_view
    from server.core.rules import Game, Rules

    rng = random.Random(8)
    differ = 0
    for i in range(40):
        deck = list(range(52))
        rng.shuffle(deck)
        deal = deal_from_deck(deck)
        game = Game(Rules(target=100))
        game.start_hand(deal)  # hand 1: pass left
        k = knowledge_of(game_view(game, 0))
        passes = [0] + [basic_pass(deal[s]) for s in (1, 2, 3)]
        cards = basic_pass(deal[0])
        noisy = _trial_pass(k, (deal, passes, i), cards, 0.15)
        assert noisy == _trial_pass(k, (deal, passes, i), cards, 0.15)  # the same plays again
        differ += noisy != _trial_pass(k, (deal, passes, i), cards, 0.0)
    assert differ > 5


def test_strict_moves_are_what_the_rules_engine_allows() -> None:
    rng = random.Random(23)
    checked = 0
    for _ in range(60):
        hand = Hand.deal(random_deal(rng), PassDirection.NONE)
        while hand.turn >= 0:
            seat = hand.turn
            suit = SUIT_MASKS[hand.trick[0] // 13] if hand.trick else 0
            moves = strict_moves(hand.hands[seat], suit, not hand.tricks, hand.hearts_broken)
            assert moves == hand.legal_plays(seat)
            checked += 1
            hand.play(seat, rng.choice(cards_of(moves)))
    assert checked == 60 * 52
