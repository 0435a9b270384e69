"""Strong's walks: the table-sense playout and the queen's doubt."""

from __future__ import annotations

import random

import pytest

from protocol.cards import mask_of_names, parse_card
from server.core.bots import walks
from server.core.bots.knowledge import knowledge_of
from server.core.bots.pass_prior import length_prior
from server.core.bots.worlds import QUEEN_DOUBT, queen_doubt, sampler_of
from server.core.room.game_view import game_view
from tests.core.bots.test_bots_crafted import game_at
from tests.core.bots.test_bots_panel import _play_positions

# North (seat 0) with low clubs; East void in clubs from the start; South holds the queen of
# spades and leads clubs on the second trick, then a spade that West tops with the king.
DOUBT_HANDS = [
    "2C 3C 4C 5C 6C 7C 8C 2D 3D 2S 3S 2H 3H",
    "9C TC JC QC 4D 5D 6D 4S 5S 6S 4H 5H 6H",
    "KC AC 7D 8D 9D TD 7S 8S 9S QS 7H 8H 9H",
    "JD QD KD AD TS JS KS AS TH JH QH KH AH",
]


def _card(trick: str, legal: str, seed: int, policy: int, live: int = 1 << 36) -> int:
    rng = walks._Rng(seed)
    cards = [parse_card(n) for n in trick.split()]
    return walks._rollout_card(cards, mask_of_names(legal.split()), rng, live, policy)


@pytest.mark.parametrize("seed", range(6))
def test_the_table_sense_playout_keeps_the_queen_of_spades_out_of_its_own_tricks(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walks, "RANDOM_PLAY", 0.0)  # the policy's own card, never a random one
    sense, old = walks.TABLE_SENSE, walks.SPARRING
    # Last to a clean spade trick, every spade it holds over the four: the five takes it, not her.
    assert _card("2S 3S 4S", "5S QS", seed, sense) == parse_card("5S")
    assert _card("2S 3S 4S", "5S QS", seed, old) == parse_card("QS")
    # On lead with the king as its only spade while she is out: never the king.
    assert _card("", "KS 9D", seed, sense) == parse_card("9D")
    assert _card("", "KS", seed, sense) == parse_card("KS")  # no other card: the king
    # Out of the suit led, she still out: the ace of spades goes before the hearts.
    assert _card("2D", "AS KH 3C", seed, sense) == parse_card("AS")
    assert _card("2D", "AS KH 3C", seed, sense, live=0) == parse_card("KH")  # she is gone
    assert _card("2D", "AS KH 3C", seed, old) == parse_card("KH")


def test_the_safe_lead_plays_the_low_card_nobody_can_duck_under(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(walks, "RANDOM_PLAY", 0.0)
    names = "2D 9C 5S"
    others = mask_of_names(["3C", "4C", "8C", "TC", "3D", "6S", "7S", "QS"])
    live = mask_of_names(names.split()) | others
    seen: set[int] = set()
    for seed in range(40):
        card = _card("", names, seed, walks.SAFE_LEAD, live)
        # Three clubs lie under the nine (it may win the trick); under the two of diamonds and
        # the five of spades, none: one of those, the seed picks which.
        assert card in (parse_card("2D"), parse_card("5S"))
        seen.add(card)
    assert len(seen) == 2
    # A suit the others are out of is not led (it would win the trick): the three of clubs.
    live = mask_of_names(["2D", "3C", "4C", "9C"])
    assert _card("", "2D 3C", 3, walks.SAFE_LEAD, live) == parse_card("3C")
    # Nothing of the others' left in any suit it holds: the lead of a random suit, as before.
    assert _card("", "2D", 1, walks.SAFE_LEAD, mask_of_names(["2D"])) == parse_card("2D")


@pytest.mark.parametrize("policy", [walks.TABLE_SENSE, walks.SAFE_LEAD])
def test_the_compiled_walks_match_the_python_walks_with_the_table_sense_a_doubt_and_the_pass(
    policy: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not walks.COMPILED:
        pytest.skip("the C extension was not built")
    compared = weighed = 0
    for j, (k, legal) in enumerate(_play_positions(19, 2)):
        doubt = queen_doubt(k) or ((1.0, QUEEN_DOUBT, 1.0, QUEEN_DOUBT**2) if j % 2 else None)
        prior = length_prior(k) if j % 3 else None
        args = (k, legal, 200, j, None, True, policy, doubt, prior)
        compiled = walks.walk_roots(*args)
        with monkeypatch.context() as m:
            m.setattr(walks, "_walks", None)
            assert walks.walk_roots(*args) == compiled
        compared += 1
        weighed += prior is not None
    assert compared > 40
    assert weighed > 20  # the first hand of a game passes: its positions have the pass's weights


def test_a_seat_that_passed_up_a_free_dump_of_the_queen_is_doubted() -> None:
    game = game_at(DOUBT_HANDS, "2C 9C AC JD")  # East's discard on the first trick: no points
    assert queen_doubt(knowledge_of(game_view(game, 0))) is None  # allowed there: no evidence
    for name in ["KC", "AD", "3C", "TC"]:  # East discards the ace of diamonds on the second trick
        game.play(game.hand.turn, parse_card(name))  # type: ignore[union-attr]
    assert queen_doubt(knowledge_of(game_view(game, 0))) == (1.0, 1.0, 1.0, QUEEN_DOUBT)
    for name in ["7S", "KS", "2S", "4S"]:  # West plays the four of spades under East's king
        game.play(game.hand.turn, parse_card(name))  # type: ignore[union-attr]
    k = knowledge_of(game_view(game, 0))
    assert queen_doubt(k) == (1.0, QUEEN_DOUBT, 1.0, QUEEN_DOUBT)
    assert queen_doubt(knowledge_of(game_view(game, 2))) is None  # South holds her

    # The deals follow the doubt: East and West hold her far less often than a uniform deal has it.
    sampler = sampler_of(k)
    rng = random.Random(5)
    held = [0, 0, 0, 0]
    for _ in range(3000):
        hands = walks.doubted_deal(sampler, rng.random, queen_doubt(k))
        held[next(s for s in range(4) if hands[s] >> 36 & 1)] += 1
    # East is void in clubs and West holds fewer unknown cards, so compare with the uniform deal.
    uniform = [0, 0, 0, 0]
    for _ in range(3000):
        hands = walks.doubted_deal(sampler, rng.random, None)
        uniform[next(s for s in range(4) if hands[s] >> 36 & 1)] += 1
    for seat in (1, 3):
        assert held[seat] < 0.45 * uniform[seat]
    assert held[2] > uniform[2] + 500
