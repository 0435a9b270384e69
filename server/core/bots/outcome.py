"""How a bot values the end of a hand: its points, the others' points, and near the target the
game itself.

Far from the target a hand is worth its points: the bot's own, with half the weight on the
others' average, so giving 26 to each of them by shooting the moon is worth going for. When the
hand can end the game, winning the game dominates (``GAME_WEIGHT``), so a bot near the target
plays for the result, not for a low hand.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.core.rules import Moon, Rules, Tie

GAME_WEIGHT = 40.0
OTHERS_WEIGHT = 0.5


def moon_points(shooter: int, choice: Moon | str) -> list[int]:
    if Moon(choice) is Moon.SHOOTER_MINUS_26:
        return [-26 if s == shooter else 0 for s in range(4)]
    return [0 if s == shooter else 26 for s in range(4)]


def utility(seat: int, scores: Sequence[int], rules: Rules, points: Sequence[int]) -> float:
    """Higher is better for ``seat`` when the hand scores ``points`` (moon rule applied)."""
    own = points[seat]
    value = -own + OTHERS_WEIGHT * (points[0] + points[1] + points[2] + points[3] - own) / 3.0
    new = [scores[s] + points[s] for s in range(4)]
    if max(new) >= rules.target:
        low = min(new)
        if new[seat] == low:
            value += GAME_WEIGHT / sum(1 for s in new if s == low)
    return value


def choose_moon(seat: int, scores: Sequence[int], rules: Rules) -> str:
    """The shooter's pick under ``shooter_chooses``, by the game, not the hand.

    Both options move the shooter 26 against each other seat, so they differ only in when the
    game ends: take the option that ends it with a win, avoid one that ends it with a loss, and
    otherwise bring the end nearer when leading (others get 26) and push it off when behind.
    """
    values: dict[Moon, float] = {}
    for choice in (Moon.OTHERS_26, Moon.SHOOTER_MINUS_26):
        pts = moon_points(seat, choice)
        new = [scores[s] + pts[s] for s in range(4)]
        low = min(new)
        lowest = sum(1 for s in new if s == low)
        if max(new) >= rules.target and (lowest == 1 or rules.tie is Tie.SHARE):
            values[choice] = 10.0 / lowest if new[seat] == low else -10.0
        else:
            leading = new[seat] == low
            values[choice] = 1.0 if leading == (choice is Moon.OTHERS_26) else 0.0
    best = max(values, key=lambda c: values[c])
    return best.value


def scored(points: list[int], seat_scores: Sequence[int], rules: Rules) -> list[int]:
    """Hand points (raw, per seat) with the table's moon rule applied."""
    for shooter in range(4):
        if points[shooter] == 26:
            if rules.moon is Moon.SHOOTER_CHOOSES:
                return moon_points(shooter, choose_moon(shooter, seat_scores, rules))
            return moon_points(shooter, rules.moon)
    return points
