"""The paced load generator at a tiny size, run as a person runs it, and its pure parts.

The runs start one node of their own; tables of four think at 1/20 of human speed for a few
seconds. Their reports are checked for every line a script reads and for figures that must
agree with each other (sockets and tables, latency percentiles in order, the last line equal to
the worse p99, a ramp's result equal to its steps, no seat dealt with a stand-in secret).
"""

from __future__ import annotations

import math
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from load_tests.paced_report import P99_BAR_MS, Window
from load_tests.think import PLAY, Pause, Thinking

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> tuple[list[str], dict[str, str]]:
    command = [sys.executable, "-m", "load_tests.paced", "--start", "1", "--think", "0.05"]
    result = subprocess.run([*command, *args], cwd=ROOT, capture_output=True, text=True, timeout=50)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    report = {}
    for line in lines:
        name, _, value = line.partition(":")
        report.setdefault(name, value.strip())
    return lines, report


def _num(text: str, pattern: str) -> float:
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in {text!r}"
    return float(match.group(1))


def _latencies(line: str) -> dict[str, float]:
    return {k: _num(line, rf"{k} ([\d.]+)") for k in ("p50", "p90", "p99", "max")}


@pytest.mark.e2e
def test_paced_run_reports_agreeing_figures(tmp_path: Path) -> None:
    tables = 3
    png = tmp_path / "latency.png"
    lines, report = _run(
        *("--tables", str(tables), "--arrival", "10", "--duration", "10", "--seed", "5"),
        *("--scan-every", "2", "--plot", str(png)),
    )
    output = "\n".join(lines)
    for name in (
        "tables",
        "moves",
        "window",
        "move_latency_ms",
        "last_seat_latency_ms",
        "node_cpu_ms_per_card",
        "redis_round_trips_per_card",
        "redis_commands_per_card",
        "state_bytes_max",
        "memory_per_socket_kib",
        "stand_in_seat_hands",
        "errors",
    ):
        assert name in report, f"no {name} line in:\n{output}"

    assert re.match(rf"^{tables} seated of {tables} arrived \(failed 0\)", report["tables"])
    assert _num(report["tables"], r"sockets: (\d+)") == 4 * tables
    assert _num(report["window"], r"with (\d+) tables") == tables
    assert _num(report["window"], r"\((\d+) sockets\)") == 4 * tables
    assert report["errors"] == "0"

    hands = _num(report["moves"], r"hands (\d+)")
    cards = _num(report["moves"], r"cards (\d+)")
    assert hands >= tables
    assert 0 < cards <= 52 * hands
    assert 0 < _num(report["moves"], r"audits verified (\d+)") <= 4 * hands
    assert _num(report["moves"], r"\(failed (\d+)\)") == 0
    assert report["stand_in_seat_hands"].startswith("0 ")
    assert _num(report["stand_in_seat_hands"], r"of (\d+) human") == 4 * hands

    window_cards = _num(report["window"], r"(\d+) cards =")
    ok, last = _latencies(report["move_latency_ms"]), _latencies(report["last_seat_latency_ms"])
    for lat in (ok, last):
        assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    all_cards = _num(report["moves"], r"all seats' (\d+)")
    assert abs(all_cards - cards) <= tables  # four players: every card is one of theirs
    last_samples = _num(report["last_seat_latency_ms"], r"(\d+) samples")
    assert 0 < last_samples <= all_cards and window_cards <= all_cards
    assert window_cards >= 0.5 * last_samples  # batches count cards to within half a second
    assert _num(report["move_latency_ms"], r"(\d+) samples") >= last_samples

    cpu = _num(report["node_cpu_ms_per_card"], r"^(-?[\d.]+)")
    assert math.isfinite(cpu)
    assert _num(report["node_cpu_ms_per_card"], r"gross ([\d.]+)") > 0
    gross_trips = _num(report["redis_round_trips_per_card"], r"gross ([\d.]+)")
    assert gross_trips >= 1  # at least one commit per card
    assert _num(report["redis_commands_per_card"], r"gross ([\d.]+)") >= gross_trips
    assert 100 < _num(report["state_bytes_max"], r"^(\d+)") < 1_000_000
    assert _num(report["state_bytes_max"], r"(\d+) keys at the last") == tables
    assert math.isfinite(_num(report["memory_per_socket_kib"], r"^(-?[\d.]+)"))

    assert lines[-1].startswith("paced_latency_ms_p99: ")
    worse = max(ok["p99"], last["p99"])
    assert float(lines[-1].split(":")[1]) == pytest.approx(worse, abs=0.05)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.e2e
def test_paced_ramp_ends_with_the_most_tables_held() -> None:
    """Also: two generator processes, JSON frames, the host moving to a ?room= socket."""
    lines, report = _run(
        *("--ramp", "--ramp-start", "1", "--ramp-step", "1", "--tables", "2", "--ramp-hold", "3"),
        *("--duration", "20", "--procs", "2", "--json", "--arrival", "20", "--rejoin-host"),
    )
    steps = [line for line in lines if line.startswith("ramp_step: ")]
    assert steps, "\n".join(lines)
    held = []
    for step in steps:
        tables = int(_num(step, r"tables (\d+)"))
        seated = _num(step, r"held (\d+)")
        p99s = [_num(step, rf"{k} ([\d.]+) ms") for k in ("p99 ok", "p99 last seat")]
        assert (max(p99s) <= P99_BAR_MS and seated >= tables) == ("NOT held" not in step), step
        if "NOT held" not in step:
            held.append(tables)
    assert lines[-1] == f"tables_held_p99_50ms: {max(held) if held else 0}"
    assert report["stand_in_seat_hands"].startswith("0 ")
    assert report["errors"] == "0"


def test_think_times_are_spread_and_bounded() -> None:
    rng = random.Random(1)
    draws = sorted(PLAY.draw(rng) for _ in range(4000))
    assert PLAY.floor <= draws[0] and draws[-1] <= PLAY.cap
    median = draws[len(draws) // 2]
    assert median == pytest.approx(PLAY.median, rel=0.1)
    assert draws[int(0.9 * len(draws))] > 1.5 * draws[int(0.1 * len(draws))]  # not a constant
    fast = Thinking(0.05, seed=2)
    assert all(0.05 * PLAY.floor <= fast.pause("playing") <= 0.05 * PLAY.cap for _ in range(100))
    assert Pause(1.0, 0.0, 0.2, 3.0).draw(rng) == pytest.approx(1.0)


def test_window_holds_only_under_the_bar_with_every_table_seated() -> None:
    window = Window("w", tables=2, start=10.0, end=20.0, tables_held=2)
    ok = [(11.0 + i / 100, "play", 0.010) for i in range(99)] + [(15.0, "pass", 0.080)]
    cards = [(10.0, 7), (10.5, 40), (20.0, 59), (20.5, 100)]  # batches: only 2 in the window
    window.fill([*ok, (25.0, "play", 9.0)], [(12.0, 0.020)], cards, [])  # 25 s is outside
    assert window.cards == 99
    assert window.p99() == pytest.approx(20.0)  # nearest rank: 99 of 100 are 10 ms; last 20
    assert window.held()
    window.fill(ok, [(12.0, 0.020), (13.0, 0.060)], cards, [])
    assert window.p99() == pytest.approx(60.0) and not window.held()
    window.fill(ok, [(12.0, 0.020)], cards, [])
    window.tables_held = 1
    assert not window.held()  # a table failed to seat: the step did not hold its load
