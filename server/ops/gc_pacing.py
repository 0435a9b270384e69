"""The node's cyclic garbage collector: young collections only, their survivors frozen.

A collection stops the event loop, so every table on the node waits for it, and its cost grows
with the objects it traverses. A node's objects are mostly long-lived (sockets, rooms, actors),
and CPython promotes the survivors of each young collection to an older generation that is
traversed again, whole, every 10-20 young collections, and all of them in a full collection:
at 2,000 paced tables a full collection took 504 ms.

So the survivors of each young collection are frozen (``gc.freeze``): moved to the permanent
generation, never traversed again. Frozen objects are still freed by reference counting when
the node lets go of them; only a reference cycle among them would never be collected. A
socket's lifecycle leaves none: ``server.net.http_protocol`` and ``server.net.ws_protocol`` break
the three cycles uvicorn, websockets and the direct send left (about 70 objects a socket), and
tests/test_collector.py checks it. In 120 s of 2,000 paced tables the young collections found
1,411 objects in cycles (exceptions' tracebacks, mostly), against 193,668 before; and once 400
paced tables had played and left, thawing and collecting everything found 306 objects in
cycles among the frozen, 296 of them there before the load (start-up's). Operators see the
node's memory as ``process_resident_memory_bytes`` (the frozen count itself is a walk of the
frozen list: ``gc.get_freeze_count`` held the loop 85-110 ms at 2,400 tables), and each
collection's pause in ``hearts_gc_pause_seconds``.

A young collection still traverses every object made since the last one that is alive,
and that includes each table's current state (a step makes a new one: 8 tracked objects for a
card in mid-game, since copies share what a step leaves alone; 18-22 before).
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

    At 2,400 paced tables a collection set off by the threshold traversed 77,000-120,000
    objects (lists, seats and the rules' ``Game`` and ``Hand``, 18-22 a table) and took 36-46
    ms, a stop of every table: about once a minute in steady play, and every few seconds while
    tables were being seated. Collected every 0.1 s, the young generation holds only the last
    0.1 s's survivors, a few thousand objects still warm in the cache.
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
