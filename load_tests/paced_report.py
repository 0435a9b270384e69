"""What a paced run measured, as report lines and a latency-over-time plot.

A ``Window`` is a stretch of the run with a fixed set of tables seated (the steady part of a
plain run, or one step of a ramp), with the nodes' and Redis' counters at both ends. Per-card
figures are that window's deltas divided by the cards played in it, also net of the idle rate
measured before any table arrived (the scheduler's polls and heartbeats, which do not grow
with the load and which dominate tiny runs).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from load_tests.bench_rules import machine_speed_line
from load_tests.measures import RedisDelta, RedisSnapshot, lag_bound, percentile
from load_tests.paced_archive import lag_summary

P99_BAR_MS = 50.0


@dataclass
class Idle:
    """Rates with no table seated: node CPU s/s, Redis commands/s and round trips/s, Redis's
    CPU s/s (0 where the run did not start Redis)."""

    seconds: float
    cpu_nodes: float
    commands: float
    round_trips: float
    cpu_redis: float = 0.0


@dataclass
class Window:
    label: str
    tables: int  # wanted in this window
    start: float  # wall clock
    cpu_nodes: float = 0.0  # seconds, during the window
    cpu_redis: float = 0.0
    cpu_generators: float = 0.0
    cpu_database: float = 0.0  # the private PostgreSQL's, where the run started one
    redis_start: RedisSnapshot | None = None
    redis: RedisDelta | None = None
    end: float = 0.0
    rss_kib: int = 0  # nodes at the end
    generator_rss_kib: int = 0  # the generator processes at the end
    tables_held: int = 0  # seated and playing at the end
    sockets: int = 0
    ok_ms: list[float] = field(default_factory=list)  # sorted
    last_seat_ms: list[float] = field(default_factory=list)  # sorted
    cards: int = 0
    lag_ms: list[float] = field(default_factory=list)  # the generators' loop lag, sorted
    node_lag_start: dict[float, float] | None = None  # the nodes' loop-lag histogram, at start
    node_lag_end: dict[float, float] | None = None  # ... and at the end
    node_gc_start: dict[float, float] | None = None  # the nodes' collector pauses, at start
    node_gc_end: dict[float, float] | None = None  # ... and at the end
    archive_start: dict[float, float] | None = None  # the nodes' archive lag, at start
    archive_end: dict[float, float] | None = None  # ... and at the end

    @property
    def seconds(self) -> float:
        return max(1e-9, self.end - self.start)

    def fill(
        self,
        ok: list[tuple[float, str, float]],
        last: list[tuple[float, float]],
        cards: list[tuple[float, int]],
        lags: list[tuple[float, list[float]]],
    ) -> None:
        """The samples of moves sent in this window, and the cards played at its tables (bots'
        too) from the workers' batches, each stamped when it was sent (within half a second)."""
        self.ok_ms = sorted(s * 1000 for at, _, s in ok if self.start <= at < self.end)
        self.last_seat_ms = sorted(s * 1000 for at, s in last if self.start <= at < self.end)
        self.cards = sum(n for at, n in cards if self.start < at <= self.end)
        self.lag_ms = sorted(s * 1000 for at, ss in lags if self.start < at <= self.end for s in ss)

    def p99(self) -> float:
        """The worse of the two p99s: what the ramp holds to the bar."""
        values = [percentile(v, 0.99) for v in (self.ok_ms, self.last_seat_ms) if v]
        return max(values) if values else math.nan

    def held(self) -> bool:
        return self.p99() <= P99_BAR_MS and self.tables_held >= self.tables


def latency_line(name: str, values: list[float], what: str) -> str:
    if not values:
        return f"{name}: none measured  ({what})"
    parts = "  ".join(
        f"{label} {percentile(values, q):.1f}"
        for label, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
    )
    return f"{name}: {parts}  max {values[-1]:.1f}  ({what}, {len(values)} samples)"


def per_card_lines(
    window: Window, idle: Idle | None, node_count: int, redis_count: int = 0
) -> list[str]:
    """node_cpu_ms_per_card, redis_round_trips_per_card and, where the run started Redis,
    redis_cpu_ms_per_card (or why they were not measured)."""
    cards = max(1, window.cards)
    out = []
    if node_count and idle is not None:
        gross = window.cpu_nodes * 1000 / cards
        net = (window.cpu_nodes - idle.cpu_nodes * window.seconds) * 1000 / cards
        out.append(
            f"node_cpu_ms_per_card: {net:.3f}  (net of the idle rate {idle.cpu_nodes:.3f} "
            f"cores; gross {gross:.3f}; {window.cards} cards in {window.seconds:.1f} s, "
            f"{node_count} node(s) busy {window.cpu_nodes / window.seconds:.2f} cores)"
        )
    else:
        out.append("node_cpu_ms_per_card: not measured  (no node pids: pass --pid for each node)")
    if window.redis is not None and idle is not None:
        d = window.redis
        trips = (d.round_trips - idle.round_trips * window.seconds) / cards
        commands = (d.commands - idle.commands * window.seconds) / cards
        top = ", ".join(
            f"{name} {calls / cards:.2f}" for name, calls in d.per_command.most_common(8)
        )
        out.append(
            f"redis_round_trips_per_card: {trips:.2f}  (read events Redis processed, so a "
            f"pipeline counts once; net of the idle rate {idle.round_trips:.0f}/s; gross "
            f"{d.round_trips / cards:.2f})"
        )
        out.append(
            f"redis_commands_per_card: {commands:.2f}  (net of the idle rate "
            f"{idle.commands:.0f}/s; gross {d.commands / cards:.2f})"
        )
        out.append(f"redis_top_commands_per_card: {top}  (gross, the probe's own calls out)")
        if redis_count:
            # The box's other cost per card: Redis shares the machine with the nodes.
            net = (window.cpu_redis - idle.cpu_redis * window.seconds) * 1000 / cards
            out.append(
                f"redis_cpu_ms_per_card: {net:.3f}  (net of the idle rate {idle.cpu_redis:.3f} "
                f"cores; gross {window.cpu_redis * 1000 / cards:.3f})"
            )
    else:
        out.append("redis_round_trips_per_card: not measured  (pass --redis-url)")
    return out


def store_lines(
    head: Window | None,
    *,
    measured: bool,
    probed: bool,
    state_max: int,
    scan: tuple[str, int, int],
    fork_times: Sequence[float],
    t0: float,
    redis_stalls: Sequence[tuple[str, int, int]] | None,
) -> list[str]:
    """The largest room state, Redis's forks (``fork_times``, wall clock; shown as s after
    ``t0``, the run's start) and stalls."""
    out: list[str] = []
    say = out.append
    pattern, scans, keys = scan
    if measured:
        say(
            f"state_bytes_max: {state_max}  (largest HSTRLEN of field s of "
            f"{pattern} over {scans} scans, {keys} keys at the last)"
        )
    else:
        say("state_bytes_max: not measured  (pass --redis-url)")
    if probed:
        start, end = (head.start, head.end) if head is not None else (0.0, 0.0)
        inside = [t for t in fork_times if start <= t < end]
        say(
            f"redis_forks: {len(inside)} in the window, {len(fork_times)} in the run  "
            "(AOF rewrites; at "
            + (", ".join(f"+{t - t0:.0f}" for t in fork_times) or "none")
            + " s; the plot marks them)"
        )
    if redis_stalls is not None:
        stalls = ", ".join(f"{e} max {worst} ms" for e, _, worst in redis_stalls)
        say(
            f"redis_stalls: {stalls or 'none'}  (Redis's latency monitor over the run: "
            "its own stalls of 20 ms and more, where it was started here)"
        )
    return out


def resource_lines(
    head: Window | None,
    *,
    nodes: bool,
    rss_before: int,
    bots: bool,
    procs: int,
    generator_rss_before: int,
    machine_speed: float,
    run_lag: Sequence[float],
) -> list[str]:
    """Memory per socket, the generators' memory, cores busy, the machine's speed and the
    generators' own loop lag (``run_lag``, seconds: the run's, used without a window)."""
    out: list[str] = []
    say = out.append
    if head is not None and nodes and head.sockets:
        per_socket = (head.rss_kib - rss_before) / head.sockets
        say(
            f"memory_per_socket_kib: {per_socket:.1f}  (node VmRSS {rss_before} KiB before, "
            f"{head.rss_kib} at the end of the window, / {head.sockets} seated sockets"
            + ("; with --bots the bot workers' start is in it)" if bots else ")")
        )
    else:
        say("memory_per_socket_kib: not measured")
    if head is not None and head.sockets:
        grown = head.generator_rss_kib - generator_rss_before
        say(
            f"generator_rss_kib: {head.generator_rss_kib}  ({procs} process(es); "
            f"{grown / head.sockets:.1f} per socket over the {generator_rss_before} before)"
        )
    if head is not None:
        cores = os.cpu_count() or 0
        database = f"  postgres {head.cpu_database / head.seconds:.2f}" if head.cpu_database else ""
        say(
            f"cpu_cores_busy: nodes {head.cpu_nodes / head.seconds:.2f}  redis "
            f"{head.cpu_redis / head.seconds:.2f}{database}  generators "
            f"{head.cpu_generators / head.seconds:.2f}  (of {cores} on this machine)"
        )
    if machine_speed:
        say(machine_speed_line(machine_speed))
    # The window's, as the latencies above: the run's would hold the generators' stall
    # while they close every socket at the end.
    lags = [s / 1000 for s in head.lag_ms] if head is not None else sorted(run_lag)
    say(
        f"generator_loop_lag_ms: p50 {percentile(lags, 0.5) * 1000:.1f}  p99 "
        f"{percentile(lags, 0.99) * 1000:.1f}  max {(lags[-1] if lags else 0) * 1000:.1f}  "
        "(the generators' own delay in the window, inside every latency above)"
    )
    return out


def node_lag_line(window: Window) -> str:
    """The nodes' own event-loop lag in the window, from their /metrics histograms."""
    if window.node_lag_start is None or window.node_lag_end is None:
        return "node_loop_lag_ms: not measured  (a node's /metrics did not answer)"
    p99, top = (lag_bound(window.node_lag_start, window.node_lag_end, f) for f in (0.99, 1.0))
    return (
        f"node_loop_lag_ms: p99 ≤ {p99 * 1000:g}  max ≤ {top * 1000:g}  (the nodes' own event "
        "loop: how late a timer due every 50 ms ran, by histogram bucket; inside every latency "
        "above)"
    )


def node_gc_line(window: Window) -> str:
    """The nodes' garbage-collection pauses in the window, from their /metrics histograms."""
    if window.node_gc_start is None or window.node_gc_end is None:
        return "node_gc_pauses: not measured  (a node's /metrics did not answer)"
    count = window.node_gc_end.get(math.inf, 0.0) - window.node_gc_start.get(math.inf, 0.0)
    what = "(the nodes' cyclic garbage collections, each a stop of every table on its node)"
    if count <= 0:
        return f"node_gc_pauses: 0 in the window  {what}"
    top = lag_bound(window.node_gc_start, window.node_gc_end, 1.0)
    return f"node_gc_pauses: {count:.0f} in the window, the longest ≤ {top * 1000:g} ms  {what}"


def _node_lag_p99(window: Window) -> str:
    if window.node_lag_start is None or window.node_lag_end is None:
        return "-"
    return f"≤ {lag_bound(window.node_lag_start, window.node_lag_end, 0.99) * 1000:g} ms"


def ramp_line(window: Window) -> str:
    return (
        f"ramp_step: tables {window.tables}  held {window.tables_held}  sockets "
        f"{window.sockets}  p99 ok {_p(window.ok_ms)}  p99 last seat {_p(window.last_seat_ms)}  "
        f"cards/s {window.cards / window.seconds:.0f}  nodes "
        f"{window.cpu_nodes / window.seconds:.2f} cores (loop lag p99 {_node_lag_p99(window)})  "
        "generators "
        f"{window.cpu_generators / window.seconds:.2f} cores (loop lag p99 {_p(window.lag_ms)})  "
        f"archive lag p99 {lag_summary(window.archive_start, window.archive_end)}  "
        f"{'held' if window.held() else 'NOT held'} (p99 ≤ {P99_BAR_MS:g} ms)"
    )


def _p(values: list[float]) -> str:
    return f"{percentile(values, 0.99):.1f} ms" if values else "-"


def plot(
    path: Path,
    t0: float,
    ok: list[tuple[float, str, float]],
    last: list[tuple[float, float]],
    tables: list[tuple[float, int]],
    windows: list[Window],
    title: str,
    forks: Sequence[float] = (),
) -> None:
    """Per-second p50/p99 of both latencies (log scale) and the tables seated, as a PNG;
    Redis's forks (AOF rewrites) as orange lines."""
    import matplotlib

    matplotlib.use("Agg")  # no display; imported here so the generator starts without it
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11, 5.5), dpi=110)
    for label, samples, style, color in (
        ("send → ok", [(at, s) for at, _, s in ok], "-", "tab:blue"),
        ("send → last seat's card_played", last, "--", "tab:red"),
    ):
        series = _per_second(t0, samples)
        if not series:
            continue
        xs = [x for x, _, _ in series]
        p50s, p99s = [p50 for _, p50, _ in series], [p99 for _, _, p99 in series]
        ax.plot(xs, p50s, style, color=color, lw=0.8, alpha=0.6, label=f"{label} p50")
        ax.plot(xs, p99s, style, color=color, lw=1.6, label=f"{label} p99")
    ax.axhline(P99_BAR_MS, color="red", lw=0.8, ls=":", label=f"{P99_BAR_MS:g} ms")
    ax.set_yscale("log")
    ax.set_xlim(left=0)
    ax.set_xlabel("seconds since the first table arrived")
    ax.set_ylabel("latency, ms (per second of sends)")
    for window in windows:
        ax.axvline(window.start - t0, color="grey", lw=0.5)
    for k, at in enumerate(forks):
        fork_label = "Redis forks (AOF rewrite)" if k == 0 else None
        ax.axvline(at - t0, color="tab:orange", lw=0.8, ls="--", label=fork_label)
    tables = [(at, n) for at, n in tables if at >= t0]
    if tables:
        seated = ax.twinx()
        seated.step(
            [at - t0 for at, _ in tables], [n for _, n in tables], "k", lw=0.8, where="post"
        )
        seated.set_ylabel("tables seated")
        seated.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _per_second(t0: float, samples: list[tuple[float, float]]) -> list[tuple[float, float, float]]:
    """(second, p50 ms, p99 ms) for each second with samples."""
    bins: dict[int, list[float]] = {}
    for at, s in samples:
        bins.setdefault(int(at - t0), []).append(s * 1000)
    out = []
    for second in sorted(bins):
        values = sorted(bins[second])
        out.append((second + 0.5, percentile(values, 0.5), percentile(values, 0.99)))
    return out
