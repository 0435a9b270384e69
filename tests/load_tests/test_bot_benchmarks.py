"""The bot benchmarks' own parts: a paced table times bot cards only (from the card before),
the cost tool plays whole hands, and the bench refuses runs it cannot bound."""

from __future__ import annotations

import pytest

from load_tests import bench_bot_workers, bot_costs
from load_tests.paced_table import PacedStats, Table, TableConfig
from load_tests.scenarios import Endpoint

NOWHERE = [Endpoint("http://127.0.0.1:1", "ws://127.0.0.1:1/ws")]


def test_a_bots_table_times_the_bots_cards_from_the_card_before() -> None:
    stats = PacedStats()
    table = Table(0, NOWHERE, TableConfig(bots=True), stats)
    table.card_counted(1, host_seat=0)  # a hand's first card: nothing before it
    table.card_counted(0, host_seat=0)  # the human's own: not a bot's answer
    table.card_counted(2, host_seat=0)
    table.card_counted(3, host_seat=0)
    assert len(stats.bot_gaps) == 2 and all(0 <= gap < 1 for _, gap in stats.bot_gaps)
    table.last_card = None  # a new hand
    table.card_counted(2, host_seat=0)
    assert len(stats.bot_gaps) == 2
    humans = PacedStats()
    four = Table(1, NOWHERE, TableConfig(bots=False), humans)
    four.card_counted(1, host_seat=0)
    four.card_counted(2, host_seat=0)
    assert humans.bot_gaps == []
    assert "bot_gaps" in stats.drain() and stats.bot_gaps == []


def test_the_cost_tool_plays_whole_hands_at_every_seat() -> None:
    taken = bot_costs.costs("basic", hands=2, seed=3)
    assert len(taken["pass"]) == 8  # four seats, two hands (the first hand passes)
    assert len(taken["play"]) + len(taken["moon"]) >= 104


def test_the_bench_is_bounded() -> None:
    with pytest.raises(SystemExit):
        bench_bot_workers.parse_args(["--max-tables", "5000"])
    with pytest.raises(SystemExit):
        bench_bot_workers.parse_args(["--duration", "3600"])
    with pytest.raises(SystemExit):  # a kill run needs a worker to carry on
        bench_bot_workers.parse_args(["--kill-every", "10"])
    assert bench_bot_workers.parse_args(["--kill-every", "10", "--workers", "2"]).workers == 2
    args = bench_bot_workers.parse_args([])
    assert args.start_tables <= args.max_tables <= bench_bot_workers.MAX_BENCH_TABLES
