"""The quick-play matching decision (matchmaker.matching): windows, grouping, bot fill."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchmaker.matching import (
    DEFAULT_CONFIG,
    Decision,
    MatchConfig,
    QueueEntry,
    bot_rating,
    compatible,
    find_tables,
    group_ok,
    queue_status,
    window,
)

NOW = 1_000.0


def entry(pid: str, display: int, target: int = 100, waited: float = 0.0) -> QueueEntry:
    return QueueEntry(pid, display, target, NOW - waited)  # type: ignore[arg-type]


def check_invariants(d: Decision, entries: list[QueueEntry], now: float, cfg: MatchConfig) -> None:
    ids = [pid for t in d.tables for pid in t.player_ids]
    assert len(ids) == len(set(ids)), "a player in two tables"
    known = {e.player_id for e in entries}
    assert set(ids) <= known
    for t in d.tables:
        assert 1 <= len(t.players) <= cfg.table_size
        assert len(t.players) + len(t.bot_ratings) == cfg.table_size
        assert all(p.target == t.target for p in t.players)
        assert group_ok(t.players, now, cfg)
        if t.bot_ratings:
            # Bots only for a table holding someone who waited long enough.
            assert any(now - p.joined_at >= cfg.bot_fill_after for p in t.players)
            assert set(t.bot_ratings) == {bot_rating(t.players)}


# --- window -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "waited,expected",
    [
        (0.0, 100),
        (4.99, 100),
        (5.0, 150),
        (9.9, 150),
        (10.0, 200),
        (49.0, 550),
        (50.0, 600),
        (500.0, 600),
        (-3.0, 100),  # joined_at slightly ahead of our clock: no wait, not a negative one
    ],
)
def test_window_widens_every_5s_and_caps(waited: float, expected: int) -> None:
    assert window(entry("a", 1500, waited=waited), NOW) == expected


def test_window_follows_config() -> None:
    cfg = MatchConfig(initial_window=50, widen_step=10, widen_every=1.0, max_window=80)
    e = entry("a", 1500, waited=2.5)
    assert window(e, NOW, cfg) == 70
    assert window(e, NOW + 10, cfg) == 80


def test_queue_status() -> None:
    s = queue_status(entry("a", 1400, target=50, waited=7.5), NOW)
    assert (s.player_id, s.target, s.waited, s.window) == ("a", 50, 7.5, 150)
    assert (s.low, s.high) == (1250, 1550)
    assert s.bots_in == pytest.approx(12.5)
    assert queue_status(entry("a", 1400, waited=30.0), NOW).bots_in == 0.0


def test_compatible_needs_both_windows() -> None:
    old, new = entry("old", 1500, waited=60.0), entry("new", 1650)
    # old accepts 1650 (±600) but new (±100) does not accept 1500: no overlap.
    assert not compatible(old, new, NOW)
    assert compatible(old, new, NOW + 10)  # new's window is now ±200
    assert not compatible(entry("a", 1500, 50), entry("b", 1500, 100), NOW)


def test_entry_validation() -> None:
    with pytest.raises(ValueError):
        QueueEntry("a", 1500, 75, NOW)  # type: ignore[arg-type]


# --- full tables ------------------------------------------------------------------------------


def test_four_close_players_are_seated_at_once() -> None:
    es = [entry(p, r) for p, r in [("a", 1500), ("b", 1550), ("c", 1450), ("d", 1520)]]
    d = find_tables(es, NOW)
    assert len(d.tables) == 1
    t = d.tables[0]
    assert set(t.player_ids) == {"a", "b", "c", "d"}
    assert t.bot_ratings == () and t.target == 100


def test_close_players_are_seated_together_before_far_ones() -> None:
    # "a" (1590) is within everyone's window of 1510..1530 but the group 1500..1530 is tighter.
    es = [entry("a", 1590), entry("b", 1500), entry("c", 1510), entry("d", 1520), entry("e", 1530)]
    d = find_tables(es, NOW)
    assert [set(t.player_ids) for t in d.tables] == [{"b", "c", "d", "e"}]


def test_two_clusters_are_not_interleaved() -> None:
    low = [entry(f"l{i}", 1400 + 10 * i) for i in range(4)]
    high = [entry(f"h{i}", 1480 + 10 * i) for i in range(4)]  # within 100 of some low ones
    d = find_tables(low + high, NOW)
    assert sorted(sorted(t.player_ids) for t in d.tables) == [
        ["h0", "h1", "h2", "h3"],
        ["l0", "l1", "l2", "l3"],
    ]


def test_far_apart_players_wait_until_their_windows_widen() -> None:
    es = [entry(p, r) for p, r in [("a", 1500), ("b", 1600), ("c", 1700), ("d", 1800)]]
    assert find_tables(es, NOW).tables == ()
    assert find_tables(es, NOW + 10).tables == ()  # ±200: 1500 and 1800 still apart
    d = find_tables(es, NOW + 15)  # ±250: still apart (300 > 250)
    assert d.tables == ()
    d = find_tables(es, NOW + 19.9)  # ±250 still, and no bots yet
    assert d.tables == ()
    d = find_tables(es, NOW + 20)  # ±300: all four overlap, a full table
    assert [set(t.player_ids) for t in d.tables] == [{"a", "b", "c", "d"}]
    assert d.tables[0].bot_ratings == ()


def test_ties_go_to_the_longest_waiters_then_ids() -> None:
    es = [entry(p, 1500, waited=w) for p, w in [("a", 1), ("b", 3), ("c", 2), ("d", 4), ("e", 0)]]
    d = find_tables(es, NOW)
    assert d.tables[0].player_ids == ("d", "b", "c", "a")  # earliest joiners, in join order
    es = [entry(p, 1500) for p in "edcba"]
    assert find_tables(es, NOW).tables[0].player_ids == ("a", "b", "c", "d")


def test_different_targets_never_mix() -> None:
    es = [entry("a", 1500, 50), entry("b", 1500, 50), entry("c", 1500, 100), entry("d", 1500, 100)]
    assert find_tables(es, NOW).tables == ()
    d = find_tables(es, NOW + 25)
    assert sorted((t.target, t.player_ids) for t in d.tables) == [
        (50, ("a", "b")),
        (100, ("c", "d")),
    ]


def test_a_player_queued_twice_is_seated_once() -> None:
    es = [entry("a", 1500, 50, waited=5), entry("a", 1500, 100, waited=1)]
    es += [entry(p, 1500, 50) for p in "bcd"] + [entry(p, 1500, 100) for p in "efg"]
    d = find_tables(es, NOW)
    check_invariants(d, es, NOW, DEFAULT_CONFIG)
    assert [set(t.player_ids) for t in d.tables] == [{"a", "b", "c", "d"}]  # the earlier entry


# --- bot fill ---------------------------------------------------------------------------------


def test_bots_fill_after_the_wait_and_not_before() -> None:
    es = [entry("a", 1720, waited=0)]
    assert find_tables(es, NOW + 19.99).tables == ()
    d = find_tables(es, NOW + 20.0)
    assert len(d.tables) == 1
    t = d.tables[0]
    assert t.player_ids == ("a",) and t.bot_ratings == (1720, 1720, 1720)


def test_bot_fill_takes_compatible_waiting_players_along() -> None:
    es = [entry("old", 1500, waited=21), entry("new", 1540), entry("far", 1800)]
    d = find_tables(es, NOW)
    assert len(d.tables) == 1
    t = d.tables[0]
    assert t.player_ids == ("old", "new")  # "far" is outside new's and old's windows
    assert t.bot_ratings == (1520, 1520)
    check_invariants(d, es, NOW, DEFAULT_CONFIG)


def test_bot_fill_separates_incompatible_overdue_players() -> None:
    es = [entry("a", 1200, waited=30), entry("b", 2300, waited=25)]
    d = find_tables(es, NOW)
    assert [(t.player_ids, t.bot_ratings) for t in d.tables] == [
        (("a",), (1200,) * 3),
        (("b",), (2300,) * 3),
    ]


def test_full_tables_before_bot_tables() -> None:
    es = [entry(p, 1500 + i, waited=30) for i, p in enumerate("abcde")]
    d = find_tables(es, NOW)
    assert [len(t.players) for t in d.tables] == [4, 1]
    check_invariants(d, es, NOW, DEFAULT_CONFIG)


# --- determinism, scale, properties -----------------------------------------------------------


def test_deterministic_and_input_order_free() -> None:
    rng = random.Random(7)
    es = [
        entry(f"p{i}", int(rng.gauss(1500, 250)), rng.choice((50, 100)), rng.uniform(0, 40))
        for i in range(400)
    ]
    first = find_tables(es, NOW)
    for _ in range(3):
        shuffled = es[:]
        rng.shuffle(shuffled)
        assert find_tables(shuffled, NOW) == first
    check_invariants(first, es, NOW, DEFAULT_CONFIG)


def test_thousands_of_players_are_matched_validly() -> None:
    # Behaviour at scale (speed is the benchmark's business, not a test's): new players all at
    # 1500 included.
    rng = random.Random(3)
    es = [
        entry(f"p{i}", int(rng.gauss(1500, 300)), rng.choice((50, 100)), rng.uniform(0, 30))
        for i in range(3000)
    ]
    es += [entry(f"n{i}", 1500, 100, rng.uniform(0, 3)) for i in range(2000)]
    d = find_tables(es, NOW)
    check_invariants(d, es, NOW, DEFAULT_CONFIG)
    assert len(d.seated) > 0.95 * len(es)


entry_st = st.builds(
    QueueEntry,
    player_id=st.sampled_from([f"p{i}" for i in range(40)]),  # repeats allowed on purpose
    display=st.integers(min_value=800, max_value=2400),
    target=st.sampled_from([50, 100]),
    joined_at=st.floats(min_value=NOW - 60, max_value=NOW + 1),
)


@settings(max_examples=200, deadline=None)
@given(entries=st.lists(entry_st, max_size=40), rnd=st.randoms(use_true_random=False))
def test_property_tables_are_valid_and_everyone_overdue_is_seated(
    entries: list[QueueEntry], rnd: random.Random
) -> None:
    d = find_tables(entries, NOW)
    check_invariants(d, entries, NOW, DEFAULT_CONFIG)
    # Anyone who waited long enough gets a table this round (alone with bots if need be).
    overdue = {e.player_id for e in entries if NOW - e.joined_at >= DEFAULT_CONFIG.bot_fill_after}
    assert overdue <= d.seated
    shuffled = entries[:]
    rnd.shuffle(shuffled)
    assert find_tables(shuffled, NOW) == d


@settings(max_examples=100, deadline=None)
@given(entries=st.lists(entry_st, max_size=40, unique_by=lambda e: e.player_id))
def test_property_no_valid_full_table_is_left_in_a_small_queue(entries: list[QueueEntry]) -> None:
    # With fewer players than K candidates, the search is exhaustive: whatever stays waiting
    # holds no four mutually compatible players of one target.
    cfg = MatchConfig(candidates=40)
    d = find_tables(entries, NOW, cfg)
    waiting = [e for e in entries if e.player_id not in d.seated]
    for target in (50, 100):
        pool = [e for e in waiting if e.target == target]
        for i, a in enumerate(pool):
            mates = [b for b in pool[i + 1 :] if compatible(a, b, NOW, cfg)]
            for x in range(len(mates)):
                for y in range(x + 1, len(mates)):
                    for z in range(y + 1, len(mates)):
                        assert not group_ok([a, mates[x], mates[y], mates[z]], NOW, cfg)
