"""The figures of one bots comparison (``load_tests.bench_bots``): its summary, the paired
change against a saved run on the same deals, and the printed report and cross table."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

# A field seat is on a moon run once it has taken every point card played so far, at least
# RUN_POINTS of them (the queen and three hearts), after RUN_TRICKS tricks.
RUN_POINTS = 16
RUN_TRICKS = 5
HEAVY = 16  # points in a hand without a moon that mostly come from a moon run that failed
SEARCHERS = ("normal", "strong", "ismcts", "flat")  # the players that search (their times are kept)


@dataclass
class Summary:
    tested: str
    fielded: str
    deals: int
    tested_mean: float
    tested_se: float
    field_mean: float
    field_se: float
    diff_se: float
    ratio: float  # tested points per hand over the field's
    ratio_se: float
    win_rate: float
    win_se: float
    games: int
    moons_tested: int
    moons_field: int
    threats: int
    stopped: int
    queens_tested: int
    queens_field: int
    heavy_tested: int
    heavy_field: int
    open_hands: int
    open_ratio: float  # the ratio over hands that could not end the game
    open_ratio_se: float
    ms_median: float
    ms_p99: float
    ms_max: float
    searched_median: float
    searched_p99: float
    cpu_median: float
    cpu_p99: float
    decisions: int
    wall_s: float
    # Per deal (the mean of its four rotations), in deal order: for a paired comparison.
    per_deal_tested: list[float] = field(default_factory=list)
    per_deal_field: list[float] = field(default_factory=list)
    # The ratio by the hand's pass direction: (hands, ratio, SE); is the gap in the pass?
    by_direction: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    # Mean CPU ms a decision: every decision, the plays alone (a single legal card included),
    # the passes alone.
    cpu_mean: float = 0.0
    cpu_play_mean: float = 0.0
    cpu_pass_mean: float = 0.0


def mean_se(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0] if values else 0.0), 0.0
    return statistics.fmean(values), statistics.stdev(values) / math.sqrt(len(values))


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] * 1000


def ratio_and_se(tested: list[float], fielded: list[float]) -> tuple[float, float]:
    """The ratio of the means and its standard error (delta method over the deals)."""
    n = len(tested)
    f = statistics.fmean(fielded) if n else 0.0
    if n < 2 or f <= 0:
        return 0.0, 0.0
    r = statistics.fmean(tested) / f
    z = [(t - r * g) / f for t, g in zip(tested, fielded, strict=True)]
    return r, statistics.stdev(z) / math.sqrt(n)


def paired(
    tested: list[float], fielded: list[float], base_tested: list[float], base_fielded: list[float]
) -> tuple[float, float, float, int]:
    """This run's ratio minus a saved run's on the same deals (the first ``n`` both have), its
    standard error over the deals' paired differences (delta method: each deal's share of the
    ratio, ``(t - r f) / mean f``), and the unpaired standard error for comparison. The same
    cards are dealt in both runs, so the luck of the deal cancels; the fewer decisions a change
    touches, the more of it does."""
    n = min(len(tested), len(base_tested))
    if n < 2:
        return 0.0, 0.0, 0.0, n

    def shares(t: list[float], f: list[float]) -> tuple[float, list[float]]:
        mf = statistics.fmean(f[:n])
        r = statistics.fmean(t[:n]) / mf
        return r, [(x - r * y) / mf for x, y in zip(t[:n], f[:n], strict=True)]

    ra, za = shares(tested, fielded)
    rb, zb = shares(base_tested, base_fielded)
    d = [x - y for x, y in zip(za, zb, strict=True)]
    unpaired = math.sqrt((statistics.variance(za) + statistics.variance(zb)) / n)
    return ra - rb, statistics.stdev(d) / math.sqrt(n), unpaired, n


def report(s: Summary) -> list[str]:
    hands = s.deals * 4
    lines = [
        f"== {s.tested} among three {s.fielded}: {s.deals} deals x 4 seats = {hands} hands ==",
        f"{s.tested} points/hand: {s.tested_mean:.3f} ± {s.tested_se:.3f}",
        f"{s.fielded} field points/hand: {s.field_mean:.3f} ± {s.field_se:.3f}",
        f"field minus {s.tested}: {s.field_mean - s.tested_mean:.3f} ± {s.diff_se:.3f}; "
        f"ratio {s.ratio:.3f} ± {s.ratio_se:.3f}",
        f"{s.tested} game win rate: {s.win_rate:.3f} ± {s.win_se:.3f} over {s.games} games "
        f"(fair share 0.25)",
        f"ratio in the {s.open_hands} hands that could not end the game (points alone at stake; "
        f"hands, not deals): {s.open_ratio:.3f} ± {s.open_ratio_se:.3f}",
        "ratio by the hand's pass (hands, not deals): "
        + ", ".join(f"{d} {r:.3f} ± {se:.3f} [{n}]" for d, (n, r, se) in s.by_direction.items()),
        f"moons shot: {s.tested} {s.moons_tested}, field {s.moons_field} (in {hands} hands)",
        f"moons stopped by {s.tested}: {s.stopped} of {s.threats} field runs (a field seat "
        f"with every point so far, >= {RUN_POINTS}, after trick {RUN_TRICKS}; stopped: "
        f"{s.tested} then took a point card and the moon failed)",
        f"queen of spades taken (hands without a moon): {s.tested} {s.queens_tested}, each field "
        f"seat {s.queens_field / 3:.1f} (of {s.queens_tested + s.queens_field}); hands of "
        f"{HEAVY}+ points without a moon: {s.tested} {s.heavy_tested}, each field seat "
        f"{s.heavy_field / 3:.1f}",
    ]
    if s.tested in SEARCHERS:
        lines.append(
            f"{s.tested} decision ms over {s.decisions} decisions (wall clock): median "
            f"{s.ms_median:.1f}, p99 {s.ms_p99:.1f}, max {s.ms_max:.1f}; searched only (not a "
            f"single legal card): median {s.searched_median:.1f}, p99 {s.searched_p99:.1f}; "
            f"CPU time: median {s.cpu_median:.1f}, p99 {s.cpu_p99:.1f}, mean {s.cpu_mean:.2f} "
            f"(plays {s.cpu_play_mean:.2f}, passes {s.cpu_pass_mean:.2f})"
        )
    lines.append(f"wall time: {s.wall_s:.0f} s")
    return lines


def cross_table(summaries: list[Summary]) -> list[str]:
    """Rows: the tested bot; columns: the field. A cell: the tested bot's points per hand over
    its field's, ± standard error, and the deals it rests on."""
    rows = list(dict.fromkeys(s.tested for s in summaries))
    cols = list(dict.fromkeys(s.fielded for s in summaries))
    cell = {(s.tested, s.fielded): s for s in summaries}
    width = 22
    lines = [
        "cross table: tested (row) points/hand / field (column) points/hand, ± SE [deals]",
        " " * 9 + "".join(f"{c:>{width}}" for c in cols),
    ]
    for r in rows:
        out = f"{r:<9}"
        for c in cols:
            s = cell.get((r, c))
            text = f"{s.ratio:.3f} ± {s.ratio_se:.3f} [{s.deals}]" if s else "-"
            out += f"{text:>{width}}"
        lines.append(out)
    lines.append("moons (row shot / field shot / row stopped of field runs):")
    for r in rows:
        out = f"{r:<9}"
        for c in cols:
            s = cell.get((r, c))
            text = f"{s.moons_tested} / {s.moons_field} / {s.stopped} of {s.threats}" if s else "-"
            out += f"{text:>{width}}"
        lines.append(out)
    lines.append("game win rate of the row bot (fair share 0.25) ± SE [games]:")
    for r in rows:
        out = f"{r:<9}"
        for c in cols:
            s = cell.get((r, c))
            text = f"{s.win_rate:.3f} ± {s.win_se:.3f} [{s.games}]" if s else "-"
            out += f"{text:>{width}}"
        lines.append(out)
    return lines
