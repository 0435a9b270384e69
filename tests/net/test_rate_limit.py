"""The rate limit of docs/protocol.md, "Limits" (``server.net.connection.rate_limit``), with time
passed in: the documented burst and rate, to the limit exactly, always pass; RATE_SLACK
seconds of the rate more pass too (frames bunched on the way); one frame past that does not."""

from __future__ import annotations

from load_tests.soak_rate import REFILL, burst_then_rate
from server.net.connection import RATE_BURST, RATE_PER_SECOND, RATE_SLACK, rate_limit

BURST = int(RATE_BURST)
SLACK = int(RATE_SLACK * RATE_PER_SECOND)


def send(full_at: float, times: list[float]) -> tuple[float, int | None]:
    """The bucket after ``times``, and the index of the first refused frame (None: none)."""
    for n, now in enumerate(times):
        after = rate_limit(full_at, now)
        if after is None:
            return full_at, n
        full_at = after
    return full_at, None


def test_the_documented_limit_exactly_always_passes() -> None:
    full_at, refused = send(0.0, burst_then_rate(1000.0, BURST, RATE_PER_SECOND, 100_000))
    assert refused is None
    last = 1000.0 + 100_000 / RATE_PER_SECOND
    # Idle exactly long enough to earn the burst back, and the burst again, and the rate.
    _, refused = send(full_at, burst_then_rate(last + REFILL, BURST, RATE_PER_SECOND, 10_000))
    assert refused is None


def test_a_burst_passes_up_to_the_slack_and_not_one_more() -> None:
    _, refused = send(0.0, [5.0] * (BURST + SLACK + 1))
    assert refused == BURST + SLACK
    # However long the idle, no more is banked than a burst.
    full_at, refused = send(0.0, [5.0] * BURST)
    _, refused = send(full_at, [5.0 + 10 * REFILL] * (BURST + SLACK + 1))
    assert refused == BURST + SLACK


def test_an_idle_too_short_earns_back_only_its_share() -> None:
    full_at, _ = send(0.0, [5.0] * BURST)
    half = 5.0 + REFILL / 2
    _, refused = send(full_at, [half] * (BURST // 2 + SLACK + 1))
    assert refused == BURST // 2 + SLACK


def test_a_little_over_the_rate_is_refused_once_the_slack_is_spent() -> None:
    over = 1.1 * RATE_PER_SECOND  # 10 % over, after a whole burst
    times = burst_then_rate(0.0, BURST, over, 10_000)
    _, refused = send(0.0, times)
    assert refused is not None
    # Five frames a second too many: the slack's frames are spent after SLACK / 5 seconds.
    assert abs(times[refused] - SLACK / (over - RATE_PER_SECOND)) < 2 / over


def test_a_fresh_bucket_is_full() -> None:
    _, refused = send(0.0, [123.0] * BURST)
    assert refused is None
