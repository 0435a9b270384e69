"""The play's weights on the walks' deals: what the others' leads and discards say about their
suit lengths."""

from __future__ import annotations

from load_tests.play_lengths import check, simulate, table_of
from server.bots.knowledge import knowledge_of
from server.bots.pass_prior import LENGTHS
from server.bots.play_prior import deal_weights, play_events, play_key
from server.bots.play_table import PLAY_WEIGHTS
from server.room.game_view import game_view

from .test_bots_crafted import game_at

HANDS = [
    "2C 3C 4C 5C 6C 7C 8C 2D 3D 2S 3S 2H 3H",
    "9C TC JC QC 4D 5D 6D 4S 5S 6S 4H 5H 6H",
    "KC AC 7D 8D 9D TD 7S 8S 9S QS 7H 8H 9H",
    "JD QD KD AD TS JS KS AS TH JH QH KH AH",
]
# West (seat 3) sheds the jack of diamonds on the first trick, South (2) leads diamonds, West
# takes it and leads spades.
PLAYS = "2C 9C KC JD 7D QD 2D 4D TS 2S 4S 7S"


def test_leads_after_the_first_trick_and_sheds_are_counted_by_seat_and_suit() -> None:
    k = knowledge_of(game_view(game_at(HANDS, PLAYS), 0))
    leads, sheds = play_events(k)
    assert leads == [[0] * 4, [0] * 4, [0, 1, 0, 0], [0, 0, 1, 0]]  # North's 2C is forced
    assert sheds == [[0] * 4, [0] * 4, [0] * 4, [0, 1, 0, 0]]
    # no pass, three tricks done (the second stage), diamonds, led none, shed one
    assert play_key(k, 3, 1) == (0, 1, 1, 0, 1)
    assert play_key(k, 2, 1) == (0, 1, 1, 1, 0)


def test_the_weights_are_the_rows_at_the_length_now_and_none_for_our_own_seat() -> None:
    k = knowledge_of(game_view(game_at(HANDS, PLAYS), 0))
    prior = deal_weights(k)
    assert prior.weights[:56] == (1.0,) * 56
    # West has played two diamonds: a deal giving it h diamonds after the pass (none here) has
    # it holding h - 2 now, weighed by the row at h - 2.
    row = PLAY_WEIGHTS[play_key(k, 3, 1)]
    at = 3 * 56 + 1 * LENGTHS
    assert prior.weights[at : at + 2] == (1.0, 1.0)
    assert prior.weights[at + 2 : at + LENGTHS] == row[: LENGTHS - 2]
    # An empty table leaves every deal as the pass weighed it: here, evenly.
    assert deal_weights(k, {}).weights == (1.0,) * (4 * 4 * LENGTHS)


def test_a_seat_that_shed_hearts_is_weighed_toward_fewer_of_them() -> None:
    # The table's shape, and one thing every field in it does: a seat that has dumped hearts on
    # others' tricks holds fewer than the walks' deals give it, most of all none.
    assert all(len(row) == LENGTHS and min(row) >= 0.1 for row in PLAY_WEIGHTS.values())
    for stage in (1, 2):
        row = PLAY_WEIGHTS[(1, stage, 3, 0, 1)]
        assert row[0] > 1.5 and row[0] == max(row)


def test_the_simulation_counts_the_true_and_the_walks_lengths_alike() -> None:
    true, model = simulate((6, 3))
    assert set(true) == set(model)
    for key in true:
        assert abs(sum(true[key]) - sum(model[key])) < 1e-6 * sum(true[key])
    table = table_of(true, model)
    assert set(table) == set(true) and all(len(row) == LENGTHS for row in table.values())


def test_the_weights_make_the_true_lengths_likelier_on_fresh_hands() -> None:
    # nats a seat and suit; the table was written from other hands (its own seed)
    assert check(24, 101, None, PLAY_WEIGHTS) > 0.01
    assert abs(check(6, 101, None, {})) < 1e-9
