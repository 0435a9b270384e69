"""Pairwise TrueSkill for four-player Hearts (server.core.ratings): properties, exact formulas."""

from __future__ import annotations

import itertools
import math

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.ratings import (
    BETA,
    DRAW_PROBABILITY,
    ENV,
    MU,
    PROVISIONAL_GAMES,
    SIGMA,
    SIGMA_FLOOR,
    TAU,
    Outcome,
    Rating,
    conservative_rating,
    display_rating,
    is_provisional,
    ladder_score,
    new_rating,
    pair_outcome,
    pair_update,
    rate_game,
)

NEW = new_rating()
SEATED = [False] * 4


def inflated(r: Rating) -> float:
    return math.sqrt(r.sigma**2 + TAU**2)


# --- environment and display ---------------------------------------------------------------


def test_environment_is_our_own_and_as_specified() -> None:
    assert (ENV.mu, ENV.sigma, ENV.beta, ENV.tau) == (25.0, 25.0 / 3, 25.0 / 6, 25.0 / 300)
    assert ENV.draw_probability == DRAW_PROBABILITY > 0
    assert ENV is not trueskill.global_env()
    assert (ENV.mu, ENV.sigma, ENV.beta) == (MU, SIGMA, BETA)


def test_new_player_displays_1500_display_is_the_mean_ladder_is_conservative() -> None:
    assert Rating(25.0, 25.0 / 3) == NEW
    assert display_rating(NEW) == 1500
    assert conservative_rating(NEW) == 900
    assert display_rating(Rating(30.0, 1.0)) == 24 * 5 + 1500
    assert conservative_rating(Rating(30.0, 1.0)) == 24 * 2 + 1500
    # Same mean, less certain: shown the same, ranked lower.
    assert display_rating(Rating(30.0, 2.0)) == display_rating(Rating(30.0, 1.0))
    assert conservative_rating(Rating(30.0, 2.0)) < conservative_rating(Rating(30.0, 1.0))


def test_provisional_and_ladder() -> None:
    assert PROVISIONAL_GAMES == 10
    assert is_provisional(9) and not is_provisional(10)
    assert ladder_score(Rating(30.0, 1.0), 9) is None
    assert ladder_score(Rating(30.0, 1.0), 10) == conservative_rating(Rating(30.0, 1.0))


@pytest.mark.parametrize("mu,sigma", [(25.0, 0.0), (25.0, -1.0), (math.nan, 1.0), (1.0, math.inf)])
def test_rating_rejects_nonsense(mu: float, sigma: float) -> None:
    with pytest.raises(ValueError):
        Rating(mu, sigma)


# --- pairwise outcomes -------------------------------------------------------------------------


def test_pair_outcome_rules() -> None:
    assert pair_outcome(10, False, 20, False) is Outcome.WIN
    assert pair_outcome(20, False, 10, False) is Outcome.LOSS
    assert pair_outcome(15, False, 15, False) is Outcome.DRAW
    # A leaver loses to anyone seated whatever the scores, and draws with another leaver.
    assert pair_outcome(0, True, 99, False) is Outcome.LOSS
    assert pair_outcome(99, False, 0, True) is Outcome.WIN
    assert pair_outcome(0, True, 99, True) is Outcome.DRAW


def _by_hand(me: Rating, opp: Rating, outcome: Outcome) -> tuple[float, float]:
    """The formulas of docs/ratings.md, written out independently of trueskill.rate_1vs1."""
    si2, sk2 = me.sigma**2 + TAU**2, opp.sigma**2 + TAU**2
    c = math.sqrt(2 * BETA**2 + si2 + sk2)
    t = (me.mu - opp.mu) / c
    eps = ENV.ppf((DRAW_PROBABILITY + 1) / 2) * math.sqrt(2) * BETA / c
    if outcome is Outcome.WIN:
        v, w = ENV.v_win(t, eps), ENV.w_win(t, eps)
        sign = 1.0
    elif outcome is Outcome.LOSS:
        v, w = ENV.v_win(-t, eps), ENV.w_win(-t, eps)
        sign = -1.0
    else:
        v, w = ENV.v_draw(t, eps), ENV.w_draw(t, eps)
        sign = 1.0
    delta_mu = sign * si2 / c * v
    post_var = si2 * (1 - si2 / c**2 * w)
    return delta_mu, 1 / post_var - 1 / si2


@pytest.mark.parametrize("outcome", list(Outcome))
@pytest.mark.parametrize(
    "me,opp",
    [(NEW, NEW), (Rating(30, 2), Rating(22, 5)), (Rating(18, 1), Rating(35, 0.8))],
)
def test_pair_update_is_the_documented_formula(me: Rating, opp: Rating, outcome: Outcome) -> None:
    got = pair_update(me, opp, outcome)
    delta_mu, gain = _by_hand(me, opp, outcome)
    assert got.delta_mu == pytest.approx(delta_mu, rel=1e-9, abs=1e-12)
    assert got.precision_gain == pytest.approx(gain, rel=1e-9, abs=1e-12)
    assert got.precision_gain > 0


def test_rate_game_combines_pairs_as_documented() -> None:
    ratings = [Rating(27, 3), Rating(24, 5), Rating(25, 1.5), Rating(20, 8)]
    scores = [40, 55, 40, 101]
    left = [False, False, False, True]
    out = rate_game(ratings, scores, left)
    for i, r in enumerate(ratings):
        ups = [
            _by_hand(r, ratings[k], pair_outcome(scores[i], left[i], scores[k], left[k]))
            for k in range(4)
            if k != i
        ]
        mu = r.mu + sum(u[0] for u in ups)
        precision = 1 / (r.sigma**2 + TAU**2) + sum(u[1] for u in ups)
        assert out[i].mu == pytest.approx(mu, rel=1e-9)
        assert out[i].sigma == pytest.approx(max(SIGMA_FLOOR, precision**-0.5), rel=1e-9)


# --- rate_game: the properties ---------------------------------------------------------


def test_four_way_tie_between_equal_players_keeps_means_and_shrinks_sigma() -> None:
    for start in (NEW, Rating(31.0, 2.5)):
        out = rate_game([start] * 4, [26, 26, 26, 26], SEATED)
        for r in out:
            assert r.mu == pytest.approx(start.mu, abs=1e-9)
            assert r.sigma < start.sigma
        assert len({r.sigma for r in out}) == 1


def test_lowest_score_gains_highest_loses() -> None:
    out = rate_game([NEW] * 4, [12, 30, 55, 104], SEATED)
    assert out[0].mu > MU > out[3].mu
    assert out[0].mu > out[1].mu > out[2].mu > out[3].mu
    # Even against stronger opponents, the winner of every pair gains.
    strong = Rating(32.0, 3.0)
    out = rate_game([NEW, strong, strong, strong], [10, 20, 30, 40], SEATED)
    assert out[0].mu > MU
    out = rate_game([strong, NEW, NEW, NEW], [40, 10, 20, 30], SEATED)
    assert out[0].mu < strong.mu


def test_new_players_first_game_numbers() -> None:
    # Pins the documented example in docs/ratings.md.
    out = rate_game([NEW] * 4, [10, 20, 30, 40], SEATED)
    assert [display_rating(r) for r in out] == [1816, 1605, 1395, 1184]
    assert [conservative_rating(r) for r in out] == [1398, 1187, 976, 765]
    assert sum(r.mu for r in out) == pytest.approx(4 * MU, abs=1e-9)


def test_permuting_seats_permutes_the_result_exactly() -> None:
    ratings = [Rating(27, 3), Rating(24, 5), Rating(25, 1.5), Rating(20, 8)]
    scores = [40, 55, 40, 101]
    left = [False, False, True, False]
    base = rate_game(ratings, scores, left)
    for perm in itertools.permutations(range(4)):
        out = rate_game(
            [ratings[p] for p in perm], [scores[p] for p in perm], [left[p] for p in perm]
        )
        assert out == [base[p] for p in perm]  # exact float equality, not approx


def test_sigma_shrinks_for_everyone() -> None:
    ratings = [NEW, Rating(28, 2), Rating(22, 4), Rating(25, 0.9)]
    for scores in ([0, 26, 52, 78], [50, 50, 10, 90]):
        out = rate_game(ratings, scores, SEATED)
        assert all(o.sigma < r.sigma for o, r in zip(out, ratings, strict=True))


def test_three_comparisons_shrink_more_than_one() -> None:
    one = pair_update(NEW, NEW, Outcome.WIN)
    single = (1 / inflated(NEW) ** 2 + one.precision_gain) ** -0.5
    out = rate_game([NEW] * 4, [10, 20, 30, 40], SEATED)
    assert out[0].sigma < single < inflated(NEW)


def test_leaver_ends_below_the_same_result_without_leaving() -> None:
    ratings = [Rating(26, 4), Rating(25, 4), Rating(24, 4), Rating(27, 4)]
    scores = [20, 45, 60, 80]
    stayed = rate_game(ratings, scores, SEATED)
    for i in range(4):
        left = [k == i for k in range(4)]
        out = rate_game(ratings, scores, left)
        if i < 3:  # the last-placed player already lost every pair: leaving changes nothing
            assert out[i].mu < stayed[i].mu
        else:
            assert out[i] == stayed[i]
        assert out[i].mu < ratings[i].mu
        for k in range(4):
            if k != i:
                # The leaver loses mu to each seated player; each seated player gains (or keeps)
                # against the leaver compared with the same game without the leave.
                assert pair_update(ratings[i], ratings[k], Outcome.LOSS).delta_mu < 0
                assert out[k].mu >= stayed[k].mu


def test_leaver_with_lowest_score_still_counts_last() -> None:
    out = rate_game([NEW] * 4, [0, 30, 40, 50], [True, False, False, False])
    assert out[0].mu == min(r.mu for r in out)
    assert out[0].mu == pytest.approx(rate_game([NEW] * 4, [99, 30, 40, 50], SEATED)[0].mu)


def test_two_leavers_draw_with_each_other() -> None:
    # Equal pre-game ratings, very different scores: as leavers they draw, so they end equal.
    out = rate_game([NEW] * 4, [5, 90, 30, 40], [True, True, False, False])
    assert out[0] == out[1]
    assert out[0].mu < MU and out[2].mu > MU and out[3].mu > MU


def test_inputs_are_validated_and_not_mutated() -> None:
    ratings = [NEW] * 4
    scores = [1, 2, 3, 4]
    rate_game(ratings, scores, SEATED)
    assert ratings == [NEW] * 4 and scores == [1, 2, 3, 4]
    with pytest.raises(ValueError):
        rate_game([NEW] * 3, [1, 2, 3], [False] * 3)
    with pytest.raises(ValueError):
        rate_game([NEW] * 4, [1, 2, 3], SEATED)


def test_extreme_upset_does_not_crash() -> None:
    # trueskill raises FloatingPointError this far apart; we treat the pair as no information.
    tiny, huge = Rating(-300.0, 0.5), Rating(300.0, 0.5)
    out = rate_game([tiny, huge, NEW, NEW], [0, 100, 50, 50], SEATED)
    assert all(math.isfinite(r.mu) and r.sigma > 0 for r in out)


# --- properties --------------------------------------------------------------------------------

ratings_st = st.builds(
    Rating,
    mu=st.floats(min_value=0.0, max_value=50.0, allow_nan=False),
    sigma=st.floats(min_value=0.5, max_value=25.0 / 3, allow_nan=False),
)
game_st = st.tuples(
    st.lists(ratings_st, min_size=4, max_size=4),
    st.lists(st.integers(min_value=0, max_value=130), min_size=4, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
)


@settings(max_examples=60, deadline=None)
@given(game=game_st, perm=st.permutations(range(4)))
def test_property_order_independent(game: tuple, perm: list[int]) -> None:
    ratings, scores, left = game
    base = rate_game(ratings, scores, left)
    out = rate_game([ratings[p] for p in perm], [scores[p] for p in perm], [left[p] for p in perm])
    assert out == [base[p] for p in perm]


@settings(max_examples=60, deadline=None)
@given(game=game_st)
def test_property_sigma_bounds(game: tuple) -> None:
    ratings, scores, left = game
    for before, after in zip(ratings, rate_game(ratings, scores, left), strict=True):
        # Never above the tau-inflated prior (every comparison adds information), never below
        # the floor. (A sigma already under ~0.7 may grow by a hair: tau outweighs one game.)
        assert SIGMA_FLOOR <= after.sigma < inflated(before)


@settings(max_examples=60, deadline=None)
@given(
    mus=st.lists(st.floats(min_value=0.0, max_value=50.0), min_size=4, max_size=4),
    sigma=st.floats(min_value=0.5, max_value=25.0 / 3),
    scores=st.lists(st.integers(min_value=0, max_value=130), min_size=4, max_size=4),
    left=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_property_zero_sum_for_equal_sigmas(
    mus: list[float], sigma: float, scores: list[int], left: list[bool]
) -> None:
    ratings = [Rating(m, sigma) for m in mus]
    out = rate_game(ratings, scores, left)
    assert math.fsum(o.mu - r.mu for o, r in zip(out, ratings, strict=True)) == pytest.approx(
        0.0, abs=1e-7
    )


@settings(max_examples=60, deadline=None)
@given(
    start=ratings_st,
    scores=st.lists(st.integers(min_value=0, max_value=130), min_size=4, max_size=4),
    left=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_property_equal_players_rank_by_result(
    start: Rating, scores: list[int], left: list[bool]
) -> None:
    out = rate_game([start] * 4, scores, left)
    for i, k in itertools.combinations(range(4), 2):
        o = pair_outcome(scores[i], left[i], scores[k], left[k])
        # Equal starting points: the one who did better in the pair (and so overall, since
        # outcomes are a total preorder) ends higher, equals end equal.
        if o is Outcome.WIN:
            assert out[i].mu > out[k].mu
        elif o is Outcome.LOSS:
            assert out[i].mu < out[k].mu
        else:
            assert out[i] == out[k]


@settings(max_examples=100, deadline=None)
@given(game=game_st, seat=st.integers(min_value=0, max_value=3))
def test_property_shown_change_follows_the_result(game: tuple, seat: int) -> None:
    """Beat all three: the shown rating never drops. Lose to all three: it never rises."""
    ratings, scores, left = game
    out = rate_game(ratings, scores, left)
    outcomes = {
        pair_outcome(scores[seat], left[seat], scores[k], left[k]) for k in range(4) if k != seat
    }
    change = display_rating(out[seat]) - display_rating(ratings[seat])
    if outcomes == {Outcome.WIN}:
        assert out[seat].mu > ratings[seat].mu and change >= 0
    if outcomes == {Outcome.LOSS}:
        assert out[seat].mu < ratings[seat].mu and change <= 0
