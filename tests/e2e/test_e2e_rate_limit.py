"""docs/protocol.md, "Limits", through a real socket against a real server: a client that keeps
to the documented rate limit by its own clock, to the limit exactly (a burst of RATE_BURST,
then RATE_PER_SECOND a second; idle until the burst is earned back, and the burst again), is
never closed; one that sends a little more is closed with 1008 "flood" after ``rate_limited``.
The ten-minute soak is load_tests/soak_rate.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from load_tests.soak_rate import REFILL, burst_then_rate, send_on_schedule
from server.net.connection import RATE_BURST, RATE_PER_SECOND, RATE_SLACK
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

BURST, RATE = int(RATE_BURST), RATE_PER_SECOND
ALLOWED = RATE_BURST + RATE_SLACK * RATE_PER_SECOND  # the most the server lets through at once


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.stop()


async def test_the_documented_limit_exactly_is_never_closed_and_a_little_more_is(
    server: ServerProcess,
) -> None:
    sustained = burst_then_rate(0.0, BURST, RATE, int(2 * RATE))
    again = burst_then_rate(sustained[-1] + REFILL, BURST, RATE, int(RATE))
    over_rate = burst_then_rate(0.0, BURST, RATE * 1.1, int(8 * RATE * 1.1))
    over_burst = burst_then_rate(0.0, BURST, RATE, int(RATE))
    over_burst += burst_then_rate(over_burst[-1] + REFILL, int(ALLOWED) + 1, RATE, 10)
    exact, fast, bursty = await asyncio.gather(
        send_on_schedule(server.ws, sustained + again),
        send_on_schedule(server.ws, over_rate),
        send_on_schedule(server.ws, over_burst),
    )
    assert exact.close_code is None and exact.rate_limited == 0
    assert exact.answered == exact.sent == len(sustained + again)
    for over in (fast, bursty):
        assert over.flood and over.rate_limited == 1, over
    # 10 % over the rate after a whole burst: closed once the slack is spent (about 5 s), not
    # before (a frame sent late only puts the close off). The burst one over the slack after
    # idling: at its last frame, or a little before when the first burst was read late (the
    # slack is for that), never within the documented burst.
    spent = BURST + RATE_SLACK * RATE / 0.1 * 1.1
    assert spent - 0.5 * RATE < fast.answered < spent + 2 * RATE, fast
    assert BURST + RATE + BURST < bursty.answered <= len(over_burst) - 10, bursty
