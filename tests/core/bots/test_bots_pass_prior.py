"""The pass's weights on the walks' deals: what a pass says about the others' suit lengths."""

from __future__ import annotations

import random

from load_tests.pass_lengths import LOG_CHANCE, check, simulate
from protocol.cards import mask_of_names
from server.core.bots import walks
from server.core.bots.knowledge import knowledge_of
from server.core.bots.pass_prior import LENGTHS, length_prior, prior_of
from server.core.bots.pass_table import LENGTH_WEIGHTS
from server.core.bots.worlds import sampler_of
from server.core.room.game_view import game_view
from server.core.rules import SUIT_MASKS, Game, Phase, Rules
from tests.core.bots.test_bots_crafted import game_at
from tests.core.bots.test_bots_panel import _play_positions

HANDS = [
    "2C 3C 4C 5C 6C 7C 8C 2D 3D 2S 3S 2H 3H",
    "9C TC JC QC 4D 5D 6D 4S 5S 6S 4H 5H 6H",
    "KC AC 7D 8D 9D TD 7S 8S 9S QS 7H 8H 9H",
    "JD QD KD AD TS JS KS AS TH JH QH KH AH",
]


def test_a_hand_without_a_pass_or_before_it_has_no_weights() -> None:
    game = game_at(HANDS, "")  # game_at's hands are dealt with no pass
    assert length_prior(knowledge_of(game_view(game, 0))) is None
    game = Game(Rules(target=100))
    game.start_hand([mask_of_names(h.split()) for h in HANDS])  # the first hand passes left

    assert game.phase is Phase.PASSING
    assert length_prior(knowledge_of(game_view(game, 0))) is None


def test_the_weights_are_the_tables_rows_for_the_other_seats_and_none_for_our_own() -> None:
    received = (1 << 9) | (1 << 10) | (1 << 40)  # the jack and queen of clubs, the three of hearts
    prior = prior_of(1, 2, received, (0, 0, 0, 0), LENGTH_WEIGHTS)
    assert prior.weights[2 * 56 : 3 * 56] == (1.0,) * 56
    # Seat 1 is seat 2's passer when passing left: offset 3; two clubs came from it.
    assert prior.weights[1 * 56 : 1 * 56 + LENGTHS] == LENGTH_WEIGHTS[(1, 3, 0, 2)]
    assert (
        prior.weights[1 * 56 + 3 * LENGTHS : 1 * 56 + 4 * LENGTHS] == LENGTH_WEIGHTS[(1, 3, 3, 1)]
    )
    # A seat void in clubs after the pass is far more likely than a uniform deal says.
    assert LENGTH_WEIGHTS[(1, 1, 0, 0)][0] > 3.0
    # A length counts what the seat has played: seven clubs held and played weigh as seven.
    clubs = SUIT_MASKS[0] & ~received & ((1 << 7) - 1)
    played = prior_of(1, 2, received, (0, clubs, 0, 0), LENGTH_WEIGHTS)
    assert played.scale(1.0, [0, 0, 0, 0], 1) == prior.scale(1.0, [0, clubs, 0, 0], 1)


def test_weighed_deals_hold_the_lengths_a_real_pass_leaves() -> None:
    shares = check(90, 120, random.Random(3), LENGTH_WEIGHTS)
    for name in ("void", "0-1 cards", "5+ cards"):
        true, uniform, weighed = shares[name]
        assert abs(weighed - true) < abs(uniform - true) / 2, (name, shares[name])
    # The mean log chance of the true lengths: a uniform deal of 36 unseen cards spreads a
    # seat's length of a suit over about seven values (log 7 is 1.95).
    truth, uniform, weighed = shares[LOG_CHANCE]
    assert truth == 0.0 and -2.3 < uniform < -1.7 and -2.6 < weighed < -1.5


def test_the_table_is_what_its_simulation_gives_in_shape() -> None:
    table = simulate(40, random.Random(1))
    assert set(table) <= set(LENGTH_WEIGHTS)
    assert len(LENGTH_WEIGHTS) == 3 * 3 * 4 * 4
    assert all(len(row) == LENGTHS and min(row) >= 0.1 for row in LENGTH_WEIGHTS.values())


def test_the_walks_weigh_their_deals_by_the_pass() -> None:
    # The pool the walks draw from: a weight for every deal, the heavier the deals a real pass
    # leaves; walks with the weights play other statistics than without.
    k, legal = next((k, legal) for k, legal in _play_positions(31, 1) if k.direction)
    prior = length_prior(k)
    assert prior is not None
    pool, cum = walks._weighed_pool(
        sampler_of(k), k.seat, prior, None, 400, walks._Rng(1), None, walks.BATCH
    )
    weights = [b - a for a, b in zip([0.0, *cum], cum, strict=False)]
    assert len(pool) == 400 and min(weights) > 0 and max(weights) > 5 * min(weights)
    for hands, w in zip(pool, weights, strict=True):
        manual = 1.0
        for s in range(4):
            if s != k.seat:
                manual = prior.scale(manual, hands, s)
        assert abs(manual - w) <= 1e-9 * max(1.0, abs(w))
    plain = walks.walk_roots(k, legal, 300, 5, policy=walks.SAFE_LEAD)
    weighed = walks.walk_roots(k, legal, 300, 5, policy=walks.SAFE_LEAD, prior=prior)
    assert plain != weighed
