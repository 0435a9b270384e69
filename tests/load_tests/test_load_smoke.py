"""The load generator at a tiny size: one node it starts itself, two tables, whole games.

It runs as a subprocess, exactly as a person would run it, and its report is checked for
presence and sense, including figures that must agree with each other (every hand deals 52
cards; every seat verifies every hand's fair-deal audit).
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLES = 2

pytestmark = pytest.mark.e2e


def _number(text: str, pattern: str) -> float:
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not found in {text!r}"
    return float(match.group(1))


def test_load_generator_reports_whole_games() -> None:
    command = [sys.executable, "-m", "load_tests.load", "--start", "1"]
    command += ["--tables", str(TABLES), "--duration", "30", "--seed", "7"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    lines = output.strip().splitlines()
    report = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in lines}

    for name in (
        "connections",
        "games_finished",
        "hands_played",
        "moves_acknowledged",
        "move_latency_ms",
        "frames_received",
        "server_rss_kib",
        "server_memory_per_connection_kib",
        "redis_commands_per_card",
        "redis_top_commands_per_card",
        "cpu_cores_busy",
        "errors",
    ):
        assert name in report, f"no {name} line in:\n{output}"

    assert _number(report["connections"], r"^(\d+)") == 4 * TABLES
    assert re.match(
        rf"^{TABLES} of {TABLES}\s+\(unfinished at the time limit: 0\)", report["games_finished"]
    )
    assert report["errors"] == "0"

    hands = _number(report["hands_played"], r"^(\d+)")
    assert hands >= TABLES  # a game to 50 takes at least two hands, each table at least one
    assert _number(report["hands_played"], r"audits verified: (\d+)") == 4 * hands
    moves = report["moves_acknowledged"]
    cards = _number(moves, r"cards played (\d+)")
    passes = _number(moves, r"passes (\d+)")
    assert cards == 52 * hands
    assert 0 < passes <= 4 * hands
    assert _number(moves, r"^(\d+)") == cards + passes + _number(moves, r"moon choices (\d+)")

    latency = {
        k: _number(report["move_latency_ms"], rf"{k} ([\d.]+)")
        for k in ("p50", "p90", "p99", "max")
    }
    assert 0 < latency["p50"] <= latency["p90"] <= latency["p99"] <= latency["max"]
    assert _number(report["move_latency_ms"], r"\((?:send → ok, )?(\d+) moves") == cards + passes
    assert _number(report["frames_received"], r"= (\d+) frames/s") > 0
    assert _number(report["server_rss_kib"], r"before (\d+)") > 10_000  # a Python process
    assert math.isfinite(_number(report["server_memory_per_connection_kib"], r"^(-?[\d.]+)"))
    assert _number(report["redis_commands_per_card"], r"^([\d.]+)") > 1  # a commit per card

    assert lines[-1].startswith("move_latency_ms_p99: ")
    assert float(lines[-1].split(":")[1]) == pytest.approx(latency["p99"], abs=0.05)
