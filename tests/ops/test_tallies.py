"""Plain-number metrics (``server.ops.tallies``) export what prometheus_client's own counters and
histograms would for the same observations: same names, labels, buckets, counts and sums."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from server.ops.tallies import Tally, TallyCollector, TimedCounts

BUCKETS = (0.001, 0.01, 0.1, 1.0)
KINDS = st.sampled_from(["play", "pass", "auth"])
OUTCOMES = st.sampled_from(["ok", "bad_card"])
# Times on the bounds too: a time equal to a bound is counted in that bound's bucket.
TIMES = st.one_of(st.sampled_from(BUCKETS), st.floats(0, 3, allow_nan=False))


def samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in registry.collect():
        for s in family.samples:
            if not s.name.endswith("_created"):
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(KINDS, OUTCOMES, TIMES), max_size=30), st.integers(0, 50))
def test_the_export_equals_prometheus_clients_own(
    observations: list[tuple[str, str, float]], frames: int
) -> None:
    theirs = CollectorRegistry()
    counter = Counter("c_commands_total", "doc", ["type", "outcome"], registry=theirs)
    histogram = Histogram("c_seconds", "doc", ["type"], buckets=BUCKETS, registry=theirs)
    sent = Counter("c_frames_total", "doc", registry=theirs)
    ours = CollectorRegistry()
    timed = TimedCounts(
        ("c_commands", "doc", ("type", "outcome")), ("c_seconds", "doc", "type"), BUCKETS
    )
    tally = Tally("c_frames", "doc")
    ours.register(TallyCollector([tally], [timed]))
    for kind, outcome, seconds in observations:
        counter.labels(kind, outcome).inc()
        histogram.labels(kind).observe(seconds)
        timed.add((kind, outcome), seconds)
    sent.inc(frames)
    tally.inc(frames)
    mine, expected = samples(ours), samples(theirs)
    assert mine.keys() == expected.keys()
    for key, value in expected.items():
        assert abs(mine[key] - value) < 1e-9, key
    assert b"c_frames_total" in generate_latest(ours)
