"""Counters and histograms kept as plain numbers, turned into Prometheus metrics when scraped.

prometheus_client's ``Counter.inc`` and ``Histogram.observe`` take a lock and check their
arguments on every call, and ``observe`` walks its buckets in Python. A node makes about a
dozen of them per card (frames sent, store calls, commits, each command's count and time), so
that overhead is paid on the hot path. A node's event loop is one thread, so
a plain ``+=`` is all a count needs; the registry's collector reads the numbers at scrape time
and exports the same names, types and labels as before.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector


class Tally:
    """One unlabelled counter (exported as ``<name>_total``)."""

    __slots__ = ("doc", "name", "value")

    def __init__(self, name: str, doc: str) -> None:
        self.name, self.doc = name, doc
        self.value = 0

    def inc(self, amount: int = 1) -> None:
        self.value += amount


class TimedCounts:
    """Counts by label values and a histogram of their times by the first label (a command's
    count by type and outcome, its time by type)."""

    def __init__(
        self,
        counter: tuple[str, str, Sequence[str]],
        histogram: tuple[str, str, str],
        buckets: Sequence[float],
    ) -> None:
        self.counter, self.histogram = counter, histogram
        self.bounds = tuple(buckets)
        self.counts: dict[tuple[str, ...], int] = {}
        # Per histogram label: the count in each bucket (its last is +Inf), then the sum.
        self.times: dict[str, list[float]] = {}

    def add(self, labels: tuple[str, str], seconds: float) -> None:
        counts = self.counts
        counts[labels] = counts.get(labels, 0) + 1
        times = self.times.get(labels[0])
        if times is None:
            times = self.times[labels[0]] = [0.0] * (len(self.bounds) + 2)
        times[bisect_left(self.bounds, seconds)] += 1  # le: a time on a bound is in its bucket
        times[-1] += seconds


class TallyCollector(Collector):
    """Exports every tally and timed count given to it."""

    def __init__(self, tallies: Sequence[Tally], timed: Sequence[TimedCounts]) -> None:
        self.tallies, self.timed = tallies, timed

    def collect(self) -> Iterator[Metric]:
        for tally in self.tallies:
            yield CounterMetricFamily(tally.name, tally.doc, value=tally.value)
        for t in self.timed:
            name, doc, labels = t.counter
            counter = CounterMetricFamily(name, doc, labels=list(labels))
            for values, count in sorted(t.counts.items()):
                counter.add_metric(list(values), count)
            yield counter
            hname, hdoc, hlabel = t.histogram
            histogram = HistogramMetricFamily(hname, hdoc, labels=[hlabel])
            for value, times in sorted(t.times.items()):
                cumulative = 0.0
                buckets: list[tuple[str, float]] = []
                for bound, in_bucket in zip((*t.bounds, float("inf")), times, strict=False):
                    cumulative += in_bucket
                    buckets.append((_bound(bound), cumulative))
                histogram.add_metric([value], buckets, sum_value=times[-1])
            yield histogram


def _bound(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(float(bound))
