"""Property tests: random legal games under every combination of house rules."""

from __future__ import annotations

import copy
import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.cards import cards_in
from server.core.rules import (
    POINT_CARDS,
    Game,
    Hand,
    HandPhase,
    IllegalMove,
    Moon,
    PassDirection,
    Phase,
    Revokes,
    Rules,
    Tie,
    deal_from_deck,
)

ALL_RULES = [
    Rules(target, moon, revokes, tie)
    for target, moon, revokes, tie in itertools.product((50, 100), Moon, Revokes, Tie)
]


def random_deal(rng: random.Random) -> list[int]:
    deck = list(range(52))
    rng.shuffle(deck)
    return deal_from_deck(deck)


def check_illegal_changes_nothing(game: Game, seat: int, rng: random.Random) -> None:
    """Try a refused card (or a card out of turn) and check the game is unchanged."""
    hand = game.hand
    refused = hand.hands[seat] & ~game.legal_plays(seat)
    other = (seat + rng.randrange(1, 4)) & 3
    attempts = [(seat, c) for c in cards_in(refused)][:2] + [
        (other, c) for c in cards_in(hand.hands[other])
    ][:1]
    before = game.to_value()
    for s, card in attempts:
        try:
            game.play(s, card)
        except IllegalMove:
            pass
        else:
            raise AssertionError(f"seat {s} played refused card {card}")
    assert game.to_value() == before


def play_random_game(rules: Rules, rng: random.Random, max_hands: int = 40) -> Game:
    game = Game(rules)
    while game.phase is not Phase.OVER and game.hand_number < max_hands:
        hand = game.start_hand(random_deal(rng))
        assert hand.direction is PassDirection.for_hand(game.hand_number)
        if game.phase is Phase.PASSING:
            before = hand.hands.copy()
            picks = [sum(1 << c for c in rng.sample(cards_in(h), 3)) for h in before]
            for seat in rng.sample(range(4), 4):
                game.pass_cards(seat, picks[seat])
            off = hand.direction
            for seat in range(4):
                assert hand.hands[seat] == (before[seat] & ~picks[seat]) | picks[(seat - off) & 3]
        assert hand.hands[hand.turn] & 1, "the 2 of clubs leads"
        played = 0
        while game.phase is Phase.PLAYING:
            seat = hand.turn
            legal = game.legal_plays(seat)
            assert legal, "a live hand always has a legal card"
            assert legal & ~hand.hands[seat] == 0
            if rng.random() < 0.05:
                check_illegal_changes_nothing(game, seat, rng)
            if rules.revokes is Revokes.ALLOWED and rng.random() < 0.01:
                accused = (seat + rng.randrange(1, 4)) & 3
                guilty = game.call_revoke(seat, accused)
                assert guilty == bool(hand.revoked >> accused & 1)
                break
            card = rng.choice(cards_in(legal))
            assert not played >> card & 1, "a card is played once"
            played |= 1 << card
            game.play(seat, card)
        if game.phase is Phase.MOON_CHOICE:
            game.choose_moon(game.moon_chooser, rng.choice(["others_26", "shooter_minus_26"]))
        check_hand_result(game)
    return game


def check_hand_result(game: Game) -> None:
    hand = game.hand
    assert hand.phase is HandPhase.OVER
    points = game.history[-1]
    if hand.revoke_call is not None:
        assert sorted(points) == [0, 0, 0, 26]
        return
    assert hand.tricks_played == 13
    assert sum(t.bit_count() for t in hand.taken) == 52
    shooter = hand.shooter()
    if shooter is None:
        assert sum(points) == 26
        assert hand.points() == points
    else:
        assert hand.taken[shooter] & POINT_CARDS == POINT_CARDS
        assert points in (
            [26 if s != shooter else 0 for s in range(4)],
            [-26 if s == shooter else 0 for s in range(4)],
        )


@settings(max_examples=60, deadline=None)
@given(rules=st.sampled_from(ALL_RULES), seed=st.integers(0, 2**32))
def test_random_legal_games_keep_every_invariant(rules: Rules, seed: int) -> None:
    game = play_random_game(rules, random.Random(seed))
    assert game.scores == [sum(h[s] for h in game.history) for s in range(4)]
    if game.over:
        low = min(game.scores)
        assert game.winners == [s for s in range(4) if game.scores[s] == low]
        assert game.playoff or max(game.scores) >= rules.target
        if rules.tie is Tie.PLAY_OFF:
            assert len(game.winners) == 1


@settings(max_examples=60, deadline=None)
@given(rules=st.sampled_from(ALL_RULES), seed=st.integers(0, 2**32), stop=st.integers(0, 60))
def test_a_serialized_game_restores_equal_at_any_point(rules: Rules, seed: int, stop: int) -> None:
    rng = random.Random(seed)
    game = Game(rules)
    game.start_hand(random_deal(rng))
    if game.phase is Phase.PASSING:
        for seat in range(min(4, stop)):
            game.pass_cards(
                seat, sum(1 << c for c in rng.sample(cards_in(game.hand.hands[seat]), 3))
            )
    for _ in range(max(0, stop - 4)):
        if game.phase is not Phase.PLAYING:
            break
        seat = game.hand.turn
        game.play(seat, rng.choice(cards_in(game.legal_plays(seat))))
    restored = Game.from_value(game.to_value())
    assert restored == game
    assert restored.phase is game.phase
    assert restored.copy() == game
    hand = game.hand
    if hand is not None:
        # A copy holds every field, and what is played on it leaves the original as it was
        # (the lists a hand only replaces are shared: ``Hand.copy``).
        copied = hand.copy()
        for name in type(hand).__slots__:
            assert getattr(hand, name) == getattr(copied, name), name
        before = copy.deepcopy([getattr(hand, name) for name in type(hand).__slots__])
        game_before = copy.deepcopy(game.to_value())
        other = game.copy()
        _play_on(other, rng, hands=2)
        _play_on(copied, rng, hands=1)
        assert [getattr(hand, name) for name in type(hand).__slots__] == before
        assert game.to_value() == game_before


def _play_on(target: Game | Hand, rng: random.Random, hands: int) -> None:
    """Random legal passes and cards on ``target`` to the end of its hand (a game: ``hands``
    more hands, its moon choices made)."""
    for _ in range(hands):
        hand = target.hand if isinstance(target, Game) else target
        if hand is None:
            return
        while hand.phase is not HandPhase.OVER:
            if hand.phase is HandPhase.PASSING:
                seat = next(s for s in range(4) if not hand.passes[s])
                three = sum(1 << c for c in rng.sample(cards_in(hand.hands[seat]), 3))
                (target.pass_cards if isinstance(target, Game) else hand.choose_pass)(seat, three)
            else:
                seat = hand.turn
                card = rng.choice(cards_in(hand.legal_plays(seat)))
                target.play(seat, card)
        if not isinstance(target, Game):
            return
        if target.phase is Phase.MOON_CHOICE:
            target.choose_moon(target.moon_chooser, "others_26")
        if target.over:
            return
        target.start_hand(random_deal(rng))
