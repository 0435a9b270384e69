"""Rating a finished game: the right numbers, bots as fixed anchors, seat order irrelevant."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.bots.levels import BOT_LEVELS
from server.core.ratings import (
    Outcome,
    Rating,
    display_rating,
    new_rating,
    pair_outcome,
    rate_game,
)
from server.core.ratings.anchors import BOT_ANCHORS
from server.league.rated_games import RatedGame, rate_participants

NEW = new_rating()


def rated(
    game_id: str,
    participants: tuple[str, ...],
    scores: tuple[int, ...] = (10, 20, 30, 40),
    left: tuple[bool, ...] = (False,) * 4,
    at: float = 500.0,
) -> RatedGame:
    return RatedGame(
        game_id=game_id,
        participants=participants,
        names=tuple(f"Name {p}" for p in participants),
        scores=scores,
        left=left,
        target=50,
        room_id=game_id.split(".")[0],
        finished_at=at,
        departures=tuple(
            {"player": p, "reason": "left"} for p, g in zip(participants, left, strict=False) if g
        ),
    )


def test_every_bot_level_has_an_anchor() -> None:
    assert set(BOT_ANCHORS) == set(BOT_LEVELS)


def test_bot_seats_do_not_depend_on_seat_order() -> None:
    before = {"h": Rating(27.0, 3.0)}
    results = []
    base = [("h", 12), ("bot:normal", 30), ("bot:normal", 5), ("bot:normal", 30)]
    for order in itertools.permutations(base):
        game = rated("r.1", tuple(p for p, _ in order), scores=tuple(s for _, s in order))
        results.append(rate_participants(game, before))
    assert all(r == results[0] for r in results)
    assert set(results[0]) == {"h"}
    # Four distinct humans: exactly rate_game.
    game = rated("r.2", ("a", "b", "c", "d"), scores=(3, 3, 9, 1))
    assert list(rate_participants(game, dict.fromkeys("abcd", NEW)).values()) == rate_game(
        [NEW] * 4, game.scores, game.left
    )


# --- properties over random games -------------------------------------------------------------

participant_st = st.sampled_from(["p1", "p2", "p3", "p4", *(b.id for b in BOT_LEVELS.values())])
table_st = (
    st.lists(participant_st, min_size=4, max_size=4)
    .filter(lambda ps: len({p for p in ps if not p.startswith("bot:")}) ==
            len([p for p in ps if not p.startswith("bot:")]))
    .filter(lambda ps: any(not p.startswith("bot:") for p in ps))
)
rating_st = st.builds(
    Rating,
    mu=st.floats(min_value=5.0, max_value=45.0),
    sigma=st.floats(min_value=0.5, max_value=25.0 / 3),
)


@settings(max_examples=150, deadline=None)
@given(
    seats=table_st,
    scores=st.lists(st.integers(min_value=0, max_value=125), min_size=4, max_size=4),
    left=st.lists(st.booleans(), min_size=4, max_size=4),
    start=st.lists(rating_st, min_size=4, max_size=4),
)
def test_property_random_games_read_right(
    seats: list[str], scores: list[int], left: list[bool], start: list[Rating]
) -> None:
    left = [gone and not p.startswith("bot:") for p, gone in zip(seats, left, strict=True)]
    game = rated("r.1", tuple(seats), scores=tuple(scores), left=tuple(left))
    before = {p: start[i] for i, p in enumerate(seats) if not p.startswith("bot:")}
    after = rate_participants(game, before)
    # Bots are anchors: never rated, so two seats of one bot identity never rate each other.
    assert set(after) == set(before)
    for i, p in enumerate(seats):
        if p.startswith("bot:"):
            continue
        outcomes = {
            pair_outcome(scores[i], left[i], scores[k], left[k]) for k in range(4) if k != i
        }
        # The shown change follows the result.
        change = display_rating(after[p]) - display_rating(before[p])
        if outcomes == {Outcome.WIN}:
            assert after[p].mu > before[p].mu and change >= 0
        if outcomes == {Outcome.LOSS}:
            assert after[p].mu < before[p].mu and change <= 0
    # Seat order does not matter (anchors included).
    order = [3, 1, 0, 2]
    moved = rated(
        "r.1",
        tuple(seats[j] for j in order),
        scores=tuple(scores[j] for j in order),
        left=tuple(left[j] for j in order),
    )
    assert rate_participants(moved, before) == after


def test_a_rated_game_is_well_formed() -> None:
    with pytest.raises(ValueError):
        rated("r.1", ("a", "b", "c"))
    with pytest.raises(ValueError):
        rated("r.1", ("a", "a", "c", "d"))  # a player in two seats
    with pytest.raises(ValueError):
        rated("r.1", ("a", "bot:basic", "c", "d"), left=(False, True, False, False))
    with pytest.raises(ValueError):
        rated("", ("a", "b", "c", "d"))


def test_the_reported_game_reads_right_now() -> None:
    """Issue 16's game: three strong bots and a new player who finished third of four."""
    seats = ("bot:strong", "bot:strong", "me", "bot:strong")
    game = rated("quick.1", seats, scores=(31, 32, 39, 54))
    after = rate_participants(game, {"me": NEW})
    # The bots were not compared with themselves, and nobody's number moved for a bot.
    assert set(after) == {"me"}
    # The player beat one bot and lost to two, all three rated well above a newcomer (the
    # calibrated strong anchor): about what was expected, so a small change either way, never
    # the bots' +287 of the report.
    assert -100 < display_rating(after["me"]) - display_rating(NEW) < 100
