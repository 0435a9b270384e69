"""Strong's priced pass: the candidates, the deal each draw sets up, the prices, the choice."""

from __future__ import annotations

import dataclasses
import random

import pytest

from protocol.cards import mask_of_names
from server.core.bots import decide, hint, walks
from server.core.bots import priced_pass as pp
from server.core.bots.basic import basic_pass
from server.core.bots.knowledge import FULL_DECK, Knowledge, knowledge_of
from server.core.room.game_view import game_view
from server.core.rules import Game, Phase, Rules
from tests.core.bots.test_bots import random_deal


def _passing(seed: int) -> Knowledge:
    """A seat's knowledge at the pass of a random deal, passing left, right or across."""
    game = Game(Rules(target=100))
    game.start_hand(random_deal(random.Random(seed)))
    assert game.phase is Phase.PASSING
    k = knowledge_of(game_view(game, seed % 4))
    return dataclasses.replace(k, direction=1 + seed % 3)


def _with_hand(k: Knowledge, names: str) -> Knowledge:
    """``k`` with this 13-card hand (nothing else known yet: it is the pass)."""
    hand = mask_of_names(names.split())
    assert hand.bit_count() == 13
    return dataclasses.replace(k, hand=hand, has=[hand if s == k.seat else 0 for s in range(4)])


def test_the_candidates_are_twenty_threes_of_the_hand_basics_first() -> None:
    for seed in range(30):
        k = _passing(seed)
        cands = pp.candidates(k.hand)
        assert cands[0] == basic_pass(k.hand)
        assert len(cands) == len(set(cands)) == 20
        for m in cands:
            assert m.bit_count() == 3 and m & ~k.hand == 0


def test_each_draw_deals_every_card_once_and_the_two_of_clubs_leads() -> None:
    for seed in range(40):
        k = _passing(seed)
        rng = random.Random(seed)
        for passed in pp.candidates(k.hand)[:3]:
            draw = pp._draw(k, rng)
            assert draw.sent.bit_count() == 3 and draw.kept.bit_count() == 10
            assert draw.sent & ~draw.kept == draw.sent and draw.sent & k.hand == 0
            (base, others, need, pattern), start = pp._position(k, passed, draw)
            placed = 0
            for s in range(4):
                assert placed & base[s] == 0
                placed |= base[s]
            assert base[k.seat] == (k.hand & ~passed) | draw.sent
            assert base[k.pass_to] & passed == passed
            assert placed & pattern[7] == 0 and placed | pattern[7] == FULL_DECK
            for s, n in zip(others, need, strict=True):
                assert base[s].bit_count() + n == 13
            leader = start[2]
            assert base[leader] & 1, "the seat that leads holds the two of clubs"


def test_the_compiled_and_python_prices_agree() -> None:
    if not walks.COMPILED:
        pytest.skip("the C extension was not built")
    for seed in range(3):
        k = _passing(seed)
        draw = pp._draw(k, random.Random(seed))
        sampler, start = pp._position(k, pp.candidates(k.hand)[1], draw)
        moon = walks.moon_table(k)
        compiled = walks.walk_price(sampler, start, k.seat, 200, draw.seed, moon)
        saved = walks._walks
        try:
            walks._walks = None
            python = walks.walk_price(sampler, start, k.seat, 200, draw.seed, moon)
        finally:
            walks._walks = saved
        assert compiled == python


def test_a_hand_that_keeps_the_bare_queen_and_her_escort_is_priced_dearer() -> None:
    # No low spade to guard her: keeping the queen, ace and king of spades and passing the top
    # hearts must cost more than passing the three spades, draw for draw on average.
    k = _with_hand(_passing(1), "QS AS KS AH KH QH 2C 3C 4C 2D 3D 4D 5D")
    spades = mask_of_names(["QS", "AS", "KS"])
    hearts = mask_of_names(["AH", "KH", "QH"])
    rng = random.Random(9)
    moon = walks.moon_table(k)
    cost = {spades: 0.0, hearts: 0.0}
    for _ in range(6):
        draw = pp._draw(k, rng)
        for passed in cost:
            sampler, start = pp._position(k, passed, draw)
            cost[passed] += walks.walk_price(sampler, start, k.seat, 400, draw.seed, moon)
    assert cost[spades] + 6 * 1.0 < cost[hearts]


def test_the_pass_is_three_of_the_hand_and_the_same_for_the_same_seed() -> None:
    for seed in range(6):
        k = _passing(seed)
        made = pp.priced_pass(k, seed).options[0].cards
        assert made.bit_count() == 3 and made & ~k.hand == 0
        assert pp.priced_pass(k, seed).options[0].cards == made


def test_a_pass_cut_short_by_the_clock_is_basics() -> None:
    for seed in range(6):
        k = _passing(seed)
        assert pp.priced_pass(k, seed, stop=lambda: True).options[0].cards == basic_pass(k.hand)


def test_the_clock_drops_a_draw_it_cuts_and_keeps_the_draws_done() -> None:
    # stop is asked before each candidate's walks: 20 candidates a draw, so a clock that runs
    # out at the 50th question leaves two whole draws priced and the third dropped.
    k = _passing(4)
    asked = 0

    def stop() -> bool:
        nonlocal asked
        asked += 1
        return asked >= 50

    prices = pp.price_passes(k, 4, stop)
    assert {p.draws for p in prices} == {2}
    assert sorted(p.cards for p in prices) == sorted(pp.candidates(k.hand))


def test_strongs_pass_and_its_hint_carry_the_prices() -> None:
    game = Game(Rules(target=100))
    game.start_hand(random_deal(random.Random(7)))
    view = game_view(game, 2)
    made = decide(view, "strong", 5)
    h = hint(view, "strong", 5)
    assert made.kind == h.kind == "pass" and h.cards == made.cards
    assert h.expected_points is not None
    assert len(h.alternatives) == 19
    assert all(a["deals"] == pp.DRAWS * pp.WALKS for a in h.alternatives)
    # decide seeds the pricing with the first 64 bits of random.Random(rng_seed)
    priced = pp.priced_pass(knowledge_of(view), random.Random(5).getrandbits(64))
    assert priced.options[0].cards == mask_of_names(list(made.cards))
