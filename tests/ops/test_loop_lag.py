"""The event-loop lag sampler (``server.ops.loop_lag``) and the load report's reading of it."""

from __future__ import annotations

import asyncio
import math
import time

from load_tests.measures import lag_bound
from server.ops.loop_lag import LoopLag


async def test_a_blocked_loop_is_recorded_as_late_and_a_free_one_is_not() -> None:
    samples: list[float] = []
    lag = LoopLag(samples.append, every=0.01)
    lag.start()
    await asyncio.sleep(0.1)
    free = list(samples)
    time.sleep(0.08)  # a callback that holds the loop
    await asyncio.sleep(0.05)
    lag.stop()
    stopped = len(samples)
    await asyncio.sleep(0.03)
    assert free and len(samples) == stopped  # it sampled, and stopping stopped it
    assert max(samples) >= 0.06  # the timer due during the hold ran at least that late
    assert max(samples) > max(free)
    assert all(s >= 0 for s in samples)


def test_the_report_reads_a_bound_from_two_cumulative_histograms() -> None:
    before = {0.005: 10.0, 0.01: 10.0, 0.05: 10.0, math.inf: 10.0}
    # 100 samples since: 98 under 5 ms, one under 10 ms, one over 50 ms.
    after = {0.005: 108.0, 0.01: 109.0, 0.05: 109.0, math.inf: 110.0}
    assert lag_bound(before, after, 0.98) == 0.005
    assert lag_bound(before, after, 0.99) == 0.01
    assert lag_bound(before, after, 1.0) == math.inf
    assert math.isnan(lag_bound(after, after, 0.99))  # no samples in between


async def test_the_generators_sampler_keeps_filling_the_list_its_owner_put_in_place() -> None:
    """A generator process sends its samples every half second by swapping in an empty list:
    the samples after the swap go to the new list, not the one already sent."""
    from load_tests.measures import LoopLag as KeptLag

    lag = KeptLag(every=0.01)
    lag.start()
    await asyncio.sleep(0.05)
    sent, lag.samples = lag.samples, []
    kept = len(sent)
    time.sleep(0.05)  # a stall after the swap
    await asyncio.sleep(0.03)
    lag.stop()
    assert kept and len(sent) == kept  # the list sent is not written to again
    assert lag.samples and max(lag.samples) >= 0.03  # the stall is in the new list
