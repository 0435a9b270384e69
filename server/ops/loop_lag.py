"""How late this node's event loop runs what is due.

Every table on a node shares its one event loop, so anything that holds the loop (a long step, a
collection of the garbage collector, the process waiting for a core) delays every move on the
node at once. A timer due every ``EVERY`` seconds records how late it ran in
``hearts_event_loop_lag_seconds``: an operator sees the stalls, and a load report tells the
node's share of the latency from its clients' own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

EVERY = 0.05  # seconds between samples: 20 timer callbacks a second, nothing next to the load


class LoopLag:
    """``record(seconds)`` gets how late each sample's timer ran (the load generators use it
    too, for their own loops)."""

    def __init__(self, record: Callable[[float], None], every: float = EVERY) -> None:
        self.record = record
        self.every = every
        self._due = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._due = loop.time() + self.every
        self._timer = loop.call_at(self._due, self._tick, loop)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        now = loop.time()
        self.record(max(0.0, now - self._due))
        self._due = now + self.every
        self._timer = loop.call_at(self._due, self._tick, loop)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
