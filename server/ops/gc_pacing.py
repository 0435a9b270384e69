"""The node's cyclic garbage collector: young collections only, their survivors frozen.

A collection stops the event loop, so every table on the node waits for it, and its cost grows
with the objects it traverses. A node's objects are mostly long-lived (sockets, rooms, actors),
and CPython promotes the survivors of each young collection to an older generation that is
traversed again, whole, every 10-20 young collections, and all of them in a full collection,
a stop that grows with the node's load (docs/benchmarks.md has the figures).

So the survivors of each young collection are frozen (``gc.freeze``): moved to the permanent
generation, never traversed again. Frozen objects are still freed by reference counting when
the node lets go of them; only a reference cycle among them would never be collected. A
socket's lifecycle leaves none: ``server.net.http_protocol`` and ``server.net.ws_protocol`` break
the three cycles uvicorn, websockets and the direct send left (about 70 objects a socket), and
tests/ops/test_gc_pacing.py checks it. Operators see the node's memory as
``process_resident_memory_bytes`` (not the frozen count: ``gc.get_freeze_count`` walks the
whole frozen list, holding the event loop), and each collection's pause in
``hearts_gc_pause_seconds``.

A young collection still traverses every object made since the last one that is alive,
and that includes each table's current state (a step makes a new one, which shares with the
old one what the step leaves alone, so a card adds only a few tracked objects).
The young threshold counts allocations net of frees, so a steady load, which frees a state for
each it makes, rarely reaches it, and when it did, the collection traversed every table's
state at once. So the node collects the young generation itself, every 0.1 s
(``PacedCollections``): each pause is the last 0.1 s's survivors. The threshold (50,000) stays
as the backstop.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from server.ops import metrics

YOUNG_THRESHOLD = 50_000  # tracked allocations (net of frees) between young collections
PACE_SECONDS = 0.1  # the node's own young collections: one this often


def install(young: int = YOUNG_THRESHOLD) -> None:
    """Freeze what start-up made, and every young collection's survivors from now on."""
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(young, older, oldest)
    if _on_collection not in gc.callbacks:
        gc.callbacks.append(_on_collection)


def uninstall() -> None:
    """Back to CPython's own policy (for tests); what was frozen is thawed."""
    if _on_collection in gc.callbacks:
        gc.callbacks.remove(_on_collection)
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)


_started = [0.0]  # when the collection in progress began (perf_counter)


def _on_collection(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _started[0] = time.perf_counter()
        return
    metrics.GC_PAUSES.observe(time.perf_counter() - _started[0])
    # The collection is over: freezing only moves the generations' lists. After a collection
    # of any generation (an older one takes the young along with it).
    gc.freeze()


class PacedCollections:
    """A young collection every ``every`` seconds, on the event loop, while installed.

    A collection set off by the threshold traverses every table's newest state at once (lists,
    seats and the rules' ``Game`` and ``Hand``), a stop of every table, and it comes most often
    while tables are being seated. Collected every 0.1 s, the young generation holds only the
    last 0.1 s's survivors, a few thousand objects still warm in the cache.
    """

    def __init__(self, every: float = PACE_SECONDS) -> None:
        self.every = every
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.every, self._tick, loop)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        if _on_collection in gc.callbacks:  # installed: survivors are frozen after it
            gc.collect(0)
        self._timer = loop.call_later(self.every, self._tick, loop)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
