"""The paced run's archive figures: the interpolated quantile of a histogram and the lines."""

from __future__ import annotations

import itertools
import math

import pytest

from load_tests.measures import histogram_quantile
from load_tests.paced_archive import ArchiveEnd, archive_lines, lag_summary
from server.ops.metrics import ARCHIVE_LAG_BUCKETS

INF = math.inf


def test_a_quantile_is_interpolated_inside_its_bucket() -> None:
    before = {0.5: 10.0, 1.0: 10.0, 2.0: 10.0, INF: 10.0}  # earlier samples are netted out
    after = {0.5: 10.0, 1.0: 60.0, 2.0: 110.0, INF: 110.0}
    assert histogram_quantile(before, after, 0.5) == pytest.approx(1.0)
    assert histogram_quantile(before, after, 0.99) == pytest.approx(1.98)
    assert histogram_quantile(before, after, 0.25) == pytest.approx(0.75)
    assert histogram_quantile({}, {0.5: 4.0, INF: 4.0}, 0.5) == pytest.approx(0.25)  # from 0
    assert histogram_quantile({}, {1.0: 0.0, INF: 10.0}, 0.99) == 1.0  # the top finite bound
    assert math.isnan(histogram_quantile(after, after, 0.99))


def test_the_buckets_are_fine_around_the_two_second_aim() -> None:
    near = [b for b in ARCHIVE_LAG_BUCKETS if 1.0 <= b <= 3.0]
    assert max(b - a for a, b in itertools.pairwise(near)) <= 1.0


def test_archive_lines_say_what_was_measured() -> None:
    before = {1.0: 0.0, 2.0: 0.0, INF: 0.0}
    after = {1.0: 90.0, 2.0: 100.0, INF: 100.0}
    lines = archive_lines(ArchiveEnd(before, after, (0, 0), 0.0, 100, "PostgreSQL"))
    report = {line.partition(":")[0]: line.partition(":")[2].strip() for line in lines}
    assert report["archive_lag_ms_p99"].startswith("1900  (bucket-interpolated")
    assert report["archived_games"].startswith("100 ")
    assert report["archived_games_in_database"].startswith("100 ")
    assert report["archive_outbox_rooms"].startswith("0 ")
    empty = archive_lines(ArchiveEnd(before, before, None, 0.0, None, ""))
    assert empty[0].startswith("archive_lag_ms_p99: none measured")
    assert lag_summary(before, after) == "1900 ms (100 games)"
    assert lag_summary(before, before) == "- (no game)"
