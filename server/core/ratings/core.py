"""Pairwise TrueSkill for four-player Hearts: a pure core (no I/O, no clock).

A rated game is read as the six pairwise results between its four participants (lower final
score wins a pair, equal scores draw, a leaver loses to everyone still seated and draws with
another leaver). Every pairwise update is computed from the PRE-game ratings with the
`trueskill` package's own 1-vs-1 update, then each player's updates are combined at once:

    mu_i'        = mu_i + Σ_k Δmu_ik                    (mean shifts summed)
    1/sigma_i'^2 = 1/s_i^2 + Σ_k (1/s_ik^2 - 1/s_i^2)   (precisions summed)
    s_i^2        = sigma_i^2 + tau^2                    (tau added once per game)

where s_ik is the sigma the 1-vs-1 update gives player i against k. docs/ratings.md derives this
and explains why six sequential 1-vs-1 calls would be wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import trueskill

MU: float = 25.0
SIGMA: float = 25.0 / 3.0
BETA: float = 25.0 / 6.0
TAU: float = 25.0 / 300.0
# Final Hearts scores tie within a pair now and then (small integers, often moved in steps of 1
# and 13); 10 % is a fair guess at how often two players finish level, and it must be > 0 or a
# drawn pair would be an impossible event under the model.
DRAW_PROBABILITY: float = 0.10

# Numeric guard only: an active player's sigma settles around 0.5-0.7 (where one game's
# information balances tau), far above this; it just keeps a pathological input from
# collapsing the uncertainty to zero.
SIGMA_FLOOR: float = TAU

PROVISIONAL_GAMES: int = 10
PLAYERS_PER_GAME: int = 4

# The one environment of the service. Never use trueskill's global setup(): another import
# could change it under us.
ENV: trueskill.TrueSkill = trueskill.TrueSkill(
    mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, draw_probability=DRAW_PROBABILITY
)


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's (or a bot level's) skill belief: a Gaussian N(mu, sigma^2)."""

    mu: float = MU
    sigma: float = SIGMA

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mu) and math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"invalid rating mu={self.mu!r} sigma={self.sigma!r}")

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: the skill we are ~99 % sure the player is above."""
        return self.mu - 3.0 * self.sigma


def new_rating() -> Rating:
    return Rating(MU, SIGMA)


DISPLAY_SCALE: float = 24.0
"""Display points per unit of mu (so the prior's 25 ± 8.3 reads as 1500 ± 200)."""


def display_rating(r: Rating) -> int:
    """The number players see: the mean, round(1500 + 24*(mu - 25)); a new player shows 1500.

    It is the mean, not a conservative estimate, so it follows the result: a win against
    every opponent only ever raises it, a loss to every opponent only ever lowers it.
    """
    return round(1500.0 + DISPLAY_SCALE * (r.mu - MU))


def conservative_rating(r: Rating) -> int:
    """round(1500 + 24*(mu - 3 sigma - 25)): the ladder's sort key, on the display's scale.

    The display minus three standard deviations: about 99 % sure the player is at least this
    good, so one lucky game cannot top the ladder. A new player has 900 here.
    """
    return round(1500.0 + DISPLAY_SCALE * (r.conservative - MU))


def is_provisional(rated_games: int) -> bool:
    return rated_games < PROVISIONAL_GAMES


def ladder_score(r: Rating, rated_games: int) -> int | None:
    """The ladder's sort key (the conservative rating), or None while provisional."""
    return None if is_provisional(rated_games) else conservative_rating(r)


class Outcome(Enum):
    """The result of one pairwise comparison, from the first player's point of view."""

    WIN = 1.0
    DRAW = 0.5
    LOSS = 0.0


def pair_outcome(score: int, left: bool, other_score: int, other_left: bool) -> Outcome:
    """Lower final score wins; a leaver loses to anyone still seated; two leavers draw."""
    if left and other_left:
        # Both abandoned the table: their scores are not comparable finishes.
        return Outcome.DRAW
    if left:
        return Outcome.LOSS
    if other_left:
        return Outcome.WIN
    if score < other_score:
        return Outcome.WIN
    if score > other_score:
        return Outcome.LOSS
    return Outcome.DRAW


@dataclass(frozen=True, slots=True)
class PairUpdate:
    """What one comparison says about player i: a mean shift and a precision gain."""

    delta_mu: float
    precision_gain: float


def pair_update(me: Rating, opponent: Rating, outcome: Outcome) -> PairUpdate:
    """trueskill's 1-vs-1 update for `me`, from the pre-game ratings, as (Δmu, Δprecision).

    The call is always made so that the result depends only on (me, opponent, outcome), never
    on which seat asked: that is what makes the whole game's result exactly seat-independent.
    """
    a = trueskill.Rating(me.mu, me.sigma)
    b = trueskill.Rating(opponent.mu, opponent.sigma)
    try:
        if outcome is Outcome.WIN:
            post = trueskill.rate_1vs1(a, b, env=ENV)[0]
        elif outcome is Outcome.LOSS:
            post = trueskill.rate_1vs1(b, a, env=ENV)[1]
        else:
            post = trueskill.rate_1vs1(a, b, drawn=True, env=ENV)[0]
    except FloatingPointError:
        # Only for upsets hundreds of mu apart (far outside any real ladder): treat the pair as
        # carrying no information rather than failing the whole game's posting.
        return PairUpdate(0.0, 0.0)
    prior_var = me.sigma**2 + TAU**2  # the 1-vs-1 update inflated by tau before updating
    gain = 1.0 / post.sigma**2 - 1.0 / prior_var
    # A comparison never adds uncertainty (w in (0, 1)); clamp float noise.
    return PairUpdate(post.mu - me.mu, max(0.0, gain))


def rate_game(
    ratings: Sequence[Rating], scores: Sequence[int], left: Sequence[bool]
) -> list[Rating]:
    """New ratings after one rated game, index-aligned with the inputs.

    `ratings`, `scores` and `left` are per participant (seat order does not matter): the
    participant rated for a seat is the one seated at the deal (a player, or a bot level's own
    identity); `left` is True for a player who left or was booted (a bot then finished the
    seat, unrated). Every comparison uses the pre-game ratings; see the module docstring.
    """
    n = len(ratings)
    if n != PLAYERS_PER_GAME or len(scores) != n or len(left) != n:
        raise ValueError(
            f"need {PLAYERS_PER_GAME} ratings, scores and left flags, "
            f"got {len(ratings)}, {len(scores)}, {len(left)}"
        )
    result: list[Rating] = []
    for i in range(n):
        updates = [
            pair_update(
                ratings[i],
                ratings[k],
                pair_outcome(scores[i], bool(left[i]), scores[k], bool(left[k])),
            )
            for k in range(n)
            if k != i
        ]
        # fsum is exactly rounded, so the sums do not depend on the opponents' seat order.
        mu = ratings[i].mu + math.fsum(u.delta_mu for u in updates)
        prior_precision = 1.0 / (ratings[i].sigma ** 2 + TAU**2)
        precision = prior_precision + math.fsum(u.precision_gain for u in updates)
        sigma = max(SIGMA_FLOOR, math.sqrt(1.0 / precision))
        result.append(Rating(mu, sigma))
    return result
