"""Sampled worlds hold exactly what the seat's view allows: counts, shown voids, passed cards."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.cards import cards_in, mask_of_names, names_of, parse_card
from server.core.bots.knowledge import knowledge_of
from server.core.bots.worlds import plausible_worlds, sample_world, surprises
from server.core.room.game_view import game_view
from server.core.rules import SUIT_MASKS, Game, Phase, Rules, deal_from_deck
from tests.core.bots.test_bots_crafted import MOON_HANDS, MOON_PLAYS, game_at

FULL = (1 << 52) - 1


def game_after(seed: int, plays: int, hand_number: int, basic: bool) -> Game:
    """A game some way into a hand: random deal and pass, then ``plays`` cards by a random
    player (or the basic bot)."""
    from server.core.bots import decide

    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    game = Game(Rules())
    game.hand_number = hand_number
    game.start_hand(deal_from_deck(deck))
    hand = game.hand
    assert hand is not None
    if game.phase is Phase.PASSING:
        for seat in range(4):
            game.pass_cards(seat, sum(1 << c for c in rng.sample(cards_in(hand.hands[seat]), 3)))
    for _ in range(plays):
        if game.phase is not Phase.PLAYING:
            break
        seat = hand.turn
        if basic:
            card = parse_card(decide(game_view(game, seat), "basic").cards[0])
        else:
            card = rng.choice(cards_in(game.legal_plays(seat)))
        game.play(seat, card)
    return game


def facts_from_view(view: dict[str, Any]) -> tuple[list[int], list[int]]:
    """Worked out here from the view directly, not through the bots' knowledge module: the
    cards each seat must hold (what we passed it) and the suits each has shown it is out of."""
    me = view["seat"]
    must = [0, 0, 0, 0]
    out_of = [0, 0, 0, 0]
    played = 0
    tricks = [(t["leader"], t["cards"]) for t in view["tricks"]]
    if view["trick"]["cards"]:
        tricks.append((view["trick"]["leader"], view["trick"]["cards"]))
    for leader, cards in tricks:
        led = parse_card(cards[0]) // 13
        for i, name in enumerate(cards):
            card = parse_card(name)
            played |= 1 << card
            if card // 13 != led:
                out_of[(leader + i) % 4] |= SUIT_MASKS[led]
    offsets = {"left": 1, "across": 2, "right": 3}
    if view["passed"] and view["pass_direction"] in offsets:
        receiver = (me + offsets[view["pass_direction"]]) % 4
        must[receiver] |= mask_of_names(view["passed"]) & ~played
    return must, out_of


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    plays=st.integers(0, 51),
    hand_number=st.integers(0, 3),
    seat=st.integers(0, 3),
    basic=st.booleans(),
    world_seed=st.integers(0, 1000),
)
def test_sampled_worlds_fit_the_counts_the_voids_and_the_passed_cards(
    seed: int, plays: int, hand_number: int, seat: int, basic: bool, world_seed: int
) -> None:
    game = game_after(seed, plays, hand_number, basic)
    view = game_view(game, seat)
    k = knowledge_of(view)
    must, out_of = facts_from_view(view)
    own = mask_of_names(view["hand"])
    played = FULL & ~(own | sum(game.hand.hands) - game.hand.hands[seat])  # type: ignore[union-attr]
    rng = random.Random(world_seed)
    for world in [sample_world(k, rng) for _ in range(3)] + plausible_worlds(k, rng, 3):
        assert world[seat] == own
        assert sum(world) == FULL & ~played
        assert world[0] | world[1] | world[2] | world[3] == sum(world)  # disjoint
        for s in range(4):
            assert world[s].bit_count() == view["hand_cards_left"][s]
            assert world[s] & must[s] == must[s], "a card we passed left its receiver"
            assert not world[s] & out_of[s], f"seat {s} holds a suit it showed it is out of"


def test_the_true_deal_fits_every_fact_and_surprises_nothing_when_the_basic_bot_played() -> None:
    for seed in range(6):
        game = game_after(seed, 30, seed % 4, basic=True)
        for seat in range(4):
            k = knowledge_of(game_view(game, seat))
            true = list(game.hand.hands)  # type: ignore[union-attr]
            for s in range(4):
                assert not true[s] & k.cannot[s] and true[s] & k.has[s] == k.has[s]
            assert surprises(k, true) == 0


def test_worlds_in_a_crafted_position_follow_the_voids_shown() -> None:
    # South showed no diamonds (the queen on West's ace) and East and South no hearts (on the
    # ace of hearts), so every unseen heart is West's and no unseen diamond is South's.
    game = game_at(MOON_HANDS, MOON_PLAYS)
    k = knowledge_of(game_view(game, 0))
    west_hearts = mask_of_names(["TH", "JH", "QH", "KH"])
    for world in plausible_worlds(k, random.Random(1), 20):
        assert world[3] & west_hearts == west_hearts
        assert not world[2] & SUIT_MASKS[1]


def test_inference_prefers_deals_that_explain_the_play() -> None:
    # North, out of diamonds, threw the ace of spades on West's ace: holding the queen of
    # spades it would have thrown her first. East, to play, should seldom give North the queen.
    hands = [
        "4C 5C 6C AS 2S 3S 2H 3H 4H 5H 6H 7H 8H",
        "2C 7C 8C 2D 3D 4D 5D 4S 5S 6S 9H TH JH",
        "KC 9C TC 6D 7D 8D 9D TD JD 7S QS QH KH",
        "3C JC QC AC QD KD AD 9S TS JS KS 8S AH",
    ]
    game = game_at(hands, "2C KC QC 6C 6D AD AS")
    k = knowledge_of(game_view(game, 1))
    rng = random.Random(4)
    queen = 1 << 36
    uniform = sum(bool(sample_world(k, rng)[0] & queen) for _ in range(300)) / 300
    plausible = sum(bool(w[0] & queen) for w in plausible_worlds(k, rng, 300)) / 300
    assert uniform > 0.25 and plausible < uniform / 2, (uniform, plausible)


def test_first_trick_points_show_a_hand_of_nothing_but_points() -> None:
    # Seat 1 holds only hearts: its heart on the first trick tells the others so.
    hands = [" ".join(r + s for r in "23456789TJQKA") for s in "CHDS"]
    game = game_at(hands, "2C 5H")
    k = knowledge_of(game_view(game, 2))
    points = SUIT_MASKS[3] | 1 << 36
    for world in [sample_world(k, random.Random(i)) for i in range(10)]:
        assert world[1] & ~points == 0, names_of(world[1])
