"""The node's cyclic garbage collector: young collections only, their survivors frozen.

A collection stops the event loop, so every table on the node waits for it, and its cost grows
with the objects it traverses. A node's objects are mostly long-lived (sockets, rooms, actors),
and CPython promotes the survivors of each young collection to an older generation that is
traversed again, whole, every 10-20 young collections, and all of them in a full collection:
at 2,000 paced tables a full collection took 504 ms.

So the survivors of each young collection are frozen (``gc.freeze``): moved to the permanent
generation, never traversed again. Frozen objects are still freed by reference counting when
the node lets go of them; only a reference cycle among them would never be collected. A
socket's lifecycle leaves none: ``server.http_protocol`` and ``server.ws_protocol`` break the
three cycles uvicorn, websockets and the direct send left (about 70 objects a socket), and
tests/test_collector.py checks it. In 120 s of 2,000 paced tables the young collections found
1,411 objects in cycles (exceptions' tracebacks, mostly), against 193,668 before; and once 400
paced tables had played and left, thawing and collecting everything found 306 objects in
cycles among the frozen, 296 of them there before the load (start-up's). Operators see the
frozen count as ``hearts_gc_frozen_objects``, and each collection's pause in
``hearts_gc_pause_seconds``.

A young collection still traverses every object made since the last one that is alive,
and that includes each table's current state (a step makes a new one): up to about 40 objects a
table. The young threshold counts allocations net of frees, so a steady load, which frees a
state for each it makes, rarely reaches it; it stays high (50,000), and collections come when
tables are seated.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from server import metrics

YOUNG_THRESHOLD = 50_000  # tracked allocations (net of frees) between young collections


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
