"""Strong's thrift (issue 56): the exact shortcuts, the walks' statistical settling and the
pass's race.

The same view and seed give the same decision; a single legal card, or a single class of equal
cards, takes no walks; a class of equal cards is one candidate, walked by its highest card. The
settling and the race (both off for strong: every setting measured played worse than the whole
budget, docs/bots.md round 24) stay pure functions of the position and seed, the compiled and
Python walks settle at the same walk, and they choose as the whole budget does in the vast
majority of positions.
"""

from __future__ import annotations

import random

import pytest

from protocol.cards import parse_card
from server.core.bots import BOT_LEVELS, decide, hint, walks
from server.core.bots import priced_pass as pp
from server.core.bots.basic import basic_pass
from server.core.bots.knowledge import Knowledge, knowledge_of
from server.core.bots.pass_prior import length_prior
from server.core.bots.search import equal_classes
from server.core.bots.walks import _Node, settled_by_confidence
from server.core.bots.worlds import queen_doubt
from server.core.room.game_view import game_view
from server.core.rules import Game, Phase, Rules
from tests.core.bots.test_bots import random_deal, waiting_seat
from tests.core.bots.test_bots_panel import _play_positions

STRONG = BOT_LEVELS["strong"]


def _root(children: dict[int, list[float]]) -> tuple[_Node, dict[int, float]]:
    """A root whose card ``c`` was walked with the rewards ``children[c]``."""
    root = _Node()
    squares: dict[int, float] = {}
    for card, rewards in children.items():
        child = root.children[card] = _Node()
        for r in rewards:
            child.credit(r)
            squares[card] = squares.get(card, 0.0) + r * r
    return root, squares


def test_the_settling_needs_a_lead_of_so_many_standard_errors() -> None:
    clean, dirty = [0.0] * 90 + [-0.5] * 10, [0.0] * 50 + [-0.5] * 50
    root, squares = _root({3: clean * 3, 7: dirty})
    assert settled_by_confidence(root, squares, 3.0)
    assert not settled_by_confidence(root, squares, 30.0)  # a lead, not that sure
    root, squares = _root({3: clean * 3, 7: clean})  # the same mean: never settled ...
    assert not settled_by_confidence(root, squares, 3.0)
    # ... unless a difference this small is tolerated, the means known this well
    assert settled_by_confidence(root, squares, 3.0, tolerance=0.2)
    root, squares = _root({3: dirty * 3, 7: clean})  # the most walked is not the best
    assert not settled_by_confidence(root, squares, 3.0)
    root, squares = _root({3: clean * 3, 7: [-1.0]})  # a card walked once: no variance yet
    assert not settled_by_confidence(root, squares, 3.0)
    root, squares = _root({3: clean})  # a single card: nothing to settle
    assert not settled_by_confidence(root, squares, 3.0)


def _strong_positions(seed: int, hands: int) -> list[tuple[Knowledge, int]]:
    """Positions with two classes of cards or more, from hands of basic bots."""
    return [
        (k, legal) for k, legal in _play_positions(seed, hands) if len(equal_classes(k, legal)) > 1
    ]


def test_the_compiled_and_python_walks_settle_at_the_same_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not walks.COMPILED:
        pytest.skip("the C extension was not built")
    compared = settled = 0
    for j, (k, legal) in enumerate(_strong_positions(31, 2)[::3]):
        args = (
            k, legal, 3000, j, None, True, walks.STRONG_POLICY, queen_doubt(k), length_prior(k),
            walks.MEASURED_CONFIDENCE, 500, walks.TOLERANCE,
        )  # fmt: skip
        compiled = walks.walk_roots(*args)
        with monkeypatch.context() as m:
            m.setattr(walks, "_walks", None)
            assert walks.walk_roots(*args) == compiled
        compared += 1
        settled += sum(r.visits for r in compiled) < 3000
    assert compared >= 8 and settled >= 3


def test_a_decision_is_the_same_for_the_same_view_and_seed() -> None:
    rng = random.Random(12)
    game = Game(Rules(target=100))
    game.start_hand(random_deal(rng))
    seen = 0
    while game.phase in (Phase.PASSING, Phase.PLAYING) and seen < 14:
        seat = waiting_seat(game)
        view = game_view(game, seat)
        d = decide(view, "strong", 3)
        assert decide(view, "strong", 3) == d
        if d.kind == "play":  # the hint's card is the card played
            assert hint(view, "strong", 3).cards == d.cards
        seen += 1
        if d.kind == "pass":
            game.pass_cards(seat, sum(1 << c for c in _cards(d.cards)))
        else:
            game.play(seat, _cards(d.cards)[0])
    assert seen == 14


def _cards(names: tuple[str, ...]) -> list[int]:
    return [parse_card(n) for n in names]


def test_one_class_takes_no_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_walks(*args: object, **kwargs: object) -> object:
        raise AssertionError("walked a decision with a single class of cards")

    found = 0
    for k, legal in _play_positions(41, 3):
        classes = equal_classes(k, legal)
        if len(classes) != 1:
            continue
        with monkeypatch.context() as m:
            m.setattr(walks, "walk_roots", no_walks)
            result = walks.walk_search(k, legal, STRONG.walks, 5)
        assert result.options[0].cards == classes[0] and legal >> result.options[0].card & 1
        found += 1
    assert found >= 5


def test_a_class_is_walked_once_and_played_by_its_highest_card() -> None:
    # Touching cards with nothing live between them are the same card in the game: one
    # candidate, its highest card walked for all of them. (Walked alone, two such cards walk
    # alike walk for walk unless the playout's discard, which compares ranks across suits,
    # tells them apart: in 73 of 77 positions here over 300 walks; docs/bots.md.)
    compared = 0
    for j, (k, legal) in enumerate(_strong_positions(43, 3)[::4]):
        classes = equal_classes(k, legal)
        result = walks.walk_search(k, legal, 2000, j)
        assert sorted(o.cards for o in result.options) == sorted(
            c for c in classes if any(o.cards == c for o in result.options)
        )
        for o in result.options:
            assert o.cards in classes and o.card == o.cards.bit_length() - 1
        assert sum(o.worlds for o in result.options) <= 2000
        compared += 1
    assert compared >= 10


def test_the_settled_walks_choose_as_the_whole_budget_does_in_most_positions() -> None:
    # docs/bots.md has the rate on 1,104 positions of strong's own games against ismcts; here,
    # positions from basic's hands, the compiled walks only (the Python walks would take minutes).
    if not walks.COMPILED:
        pytest.skip("the C extension was not built")
    positions = _strong_positions(47, 6)[:120]
    same = walked = 0
    for j, (k, legal) in enumerate(positions):
        settled = walks.walk_search(k, legal, STRONG.walks, j, None, walks.MEASURED_CONFIDENCE)
        full = walks.walk_search(k, legal, STRONG.walks, j)
        same += settled.options[0].cards == full.options[0].cards
        walked += sum(o.worlds for o in settled.options)
    assert len(positions) >= 100
    assert same >= 0.85 * len(positions)
    assert walked < 0.5 * 60000 * len(positions)  # the point of it


def _passing(seed: int) -> Knowledge:
    game = Game(Rules(target=100))
    game.start_hand(random_deal(random.Random(seed)))
    assert game.phase is Phase.PASSING
    return knowledge_of(game_view(game, seed % 4))


def test_the_raced_pass_is_the_whole_pricings_in_most_hands() -> None:
    if not walks.COMPILED:
        pytest.skip("the C extension was not built")
    same = 0
    hands = 16
    for seed in range(hands):
        k = _passing(seed)
        raced = pp.priced_pass(k, seed, race=True)
        full = pp.priced_pass(k, seed)
        same += raced.options[0].cards == full.options[0].cards
        # basic's pass is never dropped, and no candidate is priced on more draws than the
        # pass made
        basic = next(o for o in raced.options if o.cards == basic_pass(k.hand))
        made = raced.options[0]
        assert all(o.worlds <= made.worlds == basic.worlds for o in raced.options)
        assert sorted(o.cards for o in raced.options) == sorted(pp.candidates(k.hand))
    assert same >= hands - 2
