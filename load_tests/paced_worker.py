"""One generator process of a paced run: it opens its share of the tables and reports back.

The parent (``load_tests.paced``) sends ``("grow", first, end, t0, rate)``: tables ``first`` to
``end - 1`` arrive at ``rate`` tables a second from wall time ``t0``, and this process opens those
whose index modulo the number of processes is its own. ``("stop",)`` closes every socket.
Every ``REPORT_EVERY`` seconds it sends ``("batch", index, data)`` with what its players
measured since the last batch (``PacedStats.drain``), its event loop's lag and how many tables
and sockets it holds; then ``("done", index, {})``. The parent keeps them in a ``Collector``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing.queues
import queue
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import uvloop

from load_tests.cluster import die_with_parent, raise_open_files_limit
from load_tests.measures import LoopLag
from load_tests.paced_table import SETUP_TIMEOUT, PacedStats, Table, TableConfig
from load_tests.scenarios import Endpoint

REPORT_EVERY = 0.5
SETUPS_AT_ONCE = 64  # tables setting up at once in one process: a backlog, not a stampede
CLOSE_TIMEOUT = 15.0
STALE_AFTER = 30.0  # s without a card or a deal: a table that is stuck, not thinking


@dataclass(frozen=True)
class WorkerSpec:
    index: int
    procs: int
    endpoints: list[Endpoint]
    table: TableConfig


def worker_main(spec: WorkerSpec, control: Any, results: Any) -> None:
    """The process' entry: Ctrl-C belongs to the parent, which stops the workers in order."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    raise_open_files_limit()
    # uvloop, as the server's uvicorn uses: asyncio's own selector loop costs the generators
    # CPU per socket that the nodes beside them on this machine then lack.
    uvloop.run(Worker(spec, control, results).run())


class Worker:
    def __init__(
        self,
        spec: WorkerSpec,
        control: multiprocessing.queues.Queue[Any],
        results: multiprocessing.queues.Queue[Any],
    ) -> None:
        self.spec = spec
        self.control = control
        self.results = results
        self.stats = PacedStats()
        self.tables: set[Table] = set()  # seated and playing
        self.setting_up = 0
        self.lag = LoopLag()
        self.stopping = asyncio.Event()
        self.gate = asyncio.Semaphore(SETUPS_AT_ONCE)
        self.tasks: set[asyncio.Task[Any]] = set()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self.stopping.set)
        self.lag.start()
        reporter = asyncio.create_task(self._report())
        self.results.put(("ready", self.spec.index, {}))
        while not self.stopping.is_set():
            try:
                message = self.control.get_nowait()
            except queue.Empty:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), 0.05)
                continue
            if message[0] == "grow":
                self._keep(self._arrive(*message[1:]))
            elif message[0] == "stop":
                break
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await asyncio.gather(*(t.close() for t in self.tables), return_exceptions=True)
        reporter.cancel()
        self.lag.stop()
        self._send_batch()
        self.results.put(("done", self.spec.index, {}))

    def _keep(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _arrive(self, first: int, end: int, t0: float, rate: float) -> None:
        """This process' tables of ``first..end-1``, each at its own time of arrival."""
        for i in range(first, end):
            if i % self.spec.procs != self.spec.index:
                continue
            await asyncio.sleep(max(0.0, t0 + (i - first) / rate - time.time()))
            await self.gate.acquire()
            self.setting_up += 1
            self._keep(self._open(i))

    async def _open(self, index: int) -> None:
        table = Table(index, self.spec.endpoints, self.spec.table, self.stats)
        try:
            async with asyncio.timeout(SETUP_TIMEOUT):
                await table.open()
        except asyncio.CancelledError:
            await table.close()
            raise
        except Exception as e:  # a refused or failed set-up is counted, and the run goes on
            self.stats.counts["tables_failed"] += 1
            self.stats.errors[f"table set-up failed: {type(e).__name__}: {e}"[:120]] += 1
            await table.close()
        else:
            self.tables.add(table)
        finally:
            self.setting_up -= 1
            self.gate.release()

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(REPORT_EVERY)
            # What has lived this long (tables, sockets, their seats) lives for the run: out of
            # the collector's reach, a full collection no longer walks thousands of sockets'
            # objects (a stall of every socket of the process). Cyclic garbage frozen with them
            # is kept until the run ends: bounded.
            gc.freeze()
            self._send_batch()

    def _send_batch(self) -> None:
        data = self.stats.drain()
        data["lag"], self.lag.samples = self.lag.samples, []
        data["tables"] = len(self.tables)
        data["sockets"] = sum(len(t.seats) for t in self.tables)
        data["setting_up"] = self.setting_up
        now = time.perf_counter()
        data["stale_tables"] = sum(1 for t in self.tables if now - t.moved_at > STALE_AFTER)
        data["at"] = time.time()
        self.results.put(("batch", self.spec.index, data))


@dataclass
class Collector:
    """The parent's side: everything the workers sent, and the timeline of tables seated."""

    ok: list[tuple[float, str, float]] = field(default_factory=list)
    last_seat: list[tuple[float, float]] = field(default_factory=list)
    bot_gaps: list[tuple[float, float]] = field(default_factory=list)  # with --bots
    counts: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    lag: list[float] = field(default_factory=list)
    cards: list[tuple[float, int]] = field(default_factory=list)  # (batch sent at, cards)
    lag_batches: list[tuple[float, list[float]]] = field(default_factory=list)
    live: dict[int, dict[str, Any]] = field(default_factory=dict)
    timeline: list[tuple[float, int]] = field(default_factory=list)
    ready: set[int] = field(default_factory=set)
    done: set[int] = field(default_factory=set)

    def take(self, message: tuple[str, int, dict[str, Any]]) -> None:
        kind, index, data = message
        if kind == "ready":
            self.ready.add(index)
        elif kind == "done":
            self.done.add(index)
        elif kind == "batch":
            self.ok += data["ok"]
            self.last_seat += data["last_seat"]
            self.bot_gaps += data["bot_gaps"]
            self.counts.update(data["counts"])
            self.errors.update(data["errors"])
            self.lag += data["lag"]
            self.lag_batches.append((data["at"], data["lag"]))
            self.cards.append((data["at"], data["counts"].get("table_cards", 0)))
            self.live[index] = data
            self.timeline.append((data["at"], self.tables))

    @property
    def tables(self) -> int:
        return sum(d["tables"] for d in self.live.values())

    @property
    def sockets(self) -> int:
        return sum(d["sockets"] for d in self.live.values())

    @property
    def stale_tables(self) -> int:
        """Tables that saw no card and no deal for ``STALE_AFTER`` s, as last reported."""
        return sum(d.get("stale_tables", 0) for d in self.live.values())

    @property
    def setting_up(self) -> int:
        return sum(d["setting_up"] for d in self.live.values())
