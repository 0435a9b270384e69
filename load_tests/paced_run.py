"""One paced run (``load_tests.paced`` is its command line): the generator processes and the
tables they add, the measurement windows with the nodes' and Redis' counters at both ends, the
ramp's steps, the store of record's figures at the end (``load_tests.paced_archive``), and the
report assembled from ``load_tests.paced_report``'s lines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import multiprocessing
import queue
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from load_tests.bench_rules import machine_speed
from load_tests.cluster import warm_up
from load_tests.measures import (
    RedisProbe,
    cpu_seconds,
    node_gc_pauses,
    node_loop_lag,
    rss_kib,
)
from load_tests.paced_archive import ArchiveEnd, archive_lag, archive_lines, read_end
from load_tests.paced_report import (
    Idle,
    Window,
    latency_line,
    node_gc_line,
    node_lag_line,
    per_card_lines,
    plot,
    ramp_line,
    resource_lines,
    store_lines,
)
from load_tests.paced_table import TableConfig
from load_tests.paced_worker import REPORT_EVERY, Collector, WorkerSpec, worker_main
from load_tests.scenarios import Endpoint

IDLE_WINDOW = 2.0  # seconds with nothing seated: the nodes' and Redis' background rates
# After a window: the players play on this long, so a move sent at its end is answered and
# reported (every REPORT_EVERY s) by a generator still playing, not one closing its sockets.
DRAIN = 2 * REPORT_EVERY + 0.5
FORK_CHECK_EVERY = 0.25  # s between looks at Redis's fork count


@dataclass
class Target:
    endpoints: list[Endpoint]
    node_pids: list[int]
    redis_url: str | None
    description: str
    database: tuple[str, str] | None = None  # the store of record's URL and kind, if known
    database_pids: list[int] = field(default_factory=list)  # its server's, if started here


class Stopped(Exception):
    """Ctrl-C or SIGTERM: stop adding load, report what was measured."""


class PacedRun:
    def __init__(self, args: argparse.Namespace, target: Target) -> None:
        self.args = args
        self.target = target
        self.got = Collector()
        self.stop_asked = False
        self.probe = RedisProbe(target.redis_url) if target.redis_url else None
        pids = [self.probe.redis_pid()] if self.probe is not None else []
        self.redis_pids = [p for p in pids if Path(f"/proc/{p}").exists()]
        self.pattern = f"{args.key_prefix}:{{s*}}:room:*:state"  # server/store/redis/keys.py
        self.state_max = 0
        self.state_keys = 0
        self.scans = 0
        self.next_scan = 0.0
        self.forks_seen: int | None = None
        self.fork_times: list[float] = []  # when Redis forked (seen within FORK_CHECK_EVERY)
        self.next_fork_check = 0.0
        self.redis_stalls: list[tuple[str, int, int]] | None = None  # LATENCY LATEST, at the end
        self.windows: list[Window] = []
        self.t0 = 0.0
        self.grown = 0
        self.procs: list[multiprocessing.process.BaseProcess] = []
        self.controls: list[Any] = []
        self.results: Any = None
        self.generator_rss_before = 0
        self.machine_speed = 0.0  # hands a second (load_tests.bench_rules), measured at start
        self.archive_before: dict[float, float] | None = None  # the nodes' archive lag at start
        self.archive: ArchiveEnd | None = None

    # -- the workers -------------------------------------------------------------------------

    def start_workers(self) -> None:
        args = self.args
        config = TableConfig(
            binary=not args.json,
            deflate=not args.no_deflate,
            bots=args.bots,
            target=args.target,
            think=args.think,
            spread=args.spread,
            rejoin_host=args.rejoin_host,
            verify=not args.no_verify,
            seed=args.seed,
        )
        ctx = multiprocessing.get_context("spawn")
        self.results = ctx.Queue()
        for index in range(args.procs):
            control = ctx.Queue()
            spec = WorkerSpec(index, args.procs, self.target.endpoints, config)
            proc = ctx.Process(
                target=worker_main, args=(spec, control, self.results), name=f"paced-{index}"
            )
            proc.start()
            self.procs.append(proc)
            self.controls.append(control)
        self.pump_until(lambda: len(self.got.ready) == args.procs, time.time() + 60, "workers")

    def grow(self, tables: int) -> None:
        """Tables ``grown..tables-1`` arrive from now at --arrival tables a second."""
        message = ("grow", self.grown, tables, time.time(), self.args.arrival)
        for control in self.controls:
            control.put(message)
        self.grown = tables

    def stop_workers(self) -> None:
        for control in self.controls:
            with contextlib.suppress(Exception):
                control.put(("stop",))
        deadline = time.time() + 30
        with contextlib.suppress(Stopped):
            self.stop_asked = False  # a second Ctrl-C still lets the workers close their sockets
            self.pump_until(lambda: len(self.got.done) == len(self.procs), deadline, None)
        for proc in self.procs:
            proc.join(max(0.1, deadline - time.time()))
            if proc.is_alive():
                proc.terminate()
                proc.join(5)

    def pump(self, seconds: float) -> None:
        """Take the workers' messages for ``seconds``; scan the store on schedule."""
        end = time.time() + seconds
        while True:
            if self.stop_asked:
                raise Stopped
            left = end - time.time()
            if left <= 0:
                return
            with contextlib.suppress(queue.Empty):
                self.got.take(self.results.get(timeout=min(0.2, left)))
            if self.probe is not None and time.time() >= self.next_scan and self.t0 > 0:
                self.scan_states()
            if self.probe is not None and time.time() >= self.next_fork_check:
                self.check_forks()

    def pump_until(self, done: Any, deadline: float, what: str | None) -> bool:
        while not done():
            if time.time() >= deadline:
                if what is not None:
                    raise RuntimeError(f"{what} did not start within the time given")
                return False
            self.pump(0.1)
            if any(not p.is_alive() for p in self.procs) and what is not None:
                raise RuntimeError("a generator process died")
        return True

    def check_forks(self) -> None:
        """Note when Redis forks (an AOF rewrite): the plot marks it, the report counts it."""
        assert self.probe is not None
        forks = self.probe.forks()
        if self.forks_seen is not None and forks > self.forks_seen:
            self.fork_times.append(time.time())
        self.forks_seen = forks
        self.next_fork_check = time.time() + FORK_CHECK_EVERY

    def scan_states(self) -> None:
        assert self.probe is not None
        keys, largest = self.probe.largest_hash_field(self.pattern, "s")
        self.state_keys, self.state_max = keys, max(self.state_max, largest)
        self.scans += 1
        self.next_scan = time.time() + self.args.scan_every

    # -- measuring ---------------------------------------------------------------------------

    def idle_rates(self) -> Idle | None:
        if not self.target.node_pids and self.probe is None:
            return None
        before = self.probe.snapshot() if self.probe else None
        cpu = cpu_seconds(self.target.node_pids)
        cpu_redis = cpu_seconds(self.redis_pids)
        started = time.time()
        self.pump(IDLE_WINDOW)
        seconds = time.time() - started
        cpu = cpu_seconds(self.target.node_pids) - cpu
        cpu_redis = cpu_seconds(self.redis_pids) - cpu_redis
        after = self.probe.snapshot() if self.probe else None
        delta = RedisProbe.delta(before, after) if before and after else None
        return Idle(
            seconds,
            cpu / seconds,
            (delta.commands / seconds) if delta else 0.0,
            (delta.round_trips / seconds) if delta else 0.0,
            cpu_redis / seconds,
        )

    def open_window(self, label: str, tables: int) -> Window:
        window = Window(label, tables, time.time())
        window.cpu_nodes = -cpu_seconds(self.target.node_pids)
        window.cpu_redis = -cpu_seconds(self.redis_pids)
        window.cpu_generators = -cpu_seconds([p.pid for p in self.procs if p.pid])
        window.cpu_database = -cpu_seconds(self.target.database_pids)
        window.redis_start = self.probe.snapshot() if self.probe else None
        window.node_lag_start = node_loop_lag(self._node_urls())
        window.node_gc_start = node_gc_pauses(self._node_urls())
        window.archive_start = archive_lag(self._node_urls())
        self.windows.append(window)
        return window

    def close_window(self, window: Window) -> None:
        window.end = time.time()
        window.cpu_nodes += cpu_seconds(self.target.node_pids)
        window.cpu_redis += cpu_seconds(self.redis_pids)
        window.cpu_generators += cpu_seconds([p.pid for p in self.procs if p.pid])
        window.cpu_database += cpu_seconds(self.target.database_pids)
        if self.probe is not None and window.redis_start is not None:
            window.redis = RedisProbe.delta(window.redis_start, self.probe.snapshot())
        window.rss_kib = rss_kib(self.target.node_pids)
        if window.node_lag_start is not None:
            window.node_lag_end = node_loop_lag(self._node_urls())
        if window.node_gc_start is not None:
            window.node_gc_end = node_gc_pauses(self._node_urls())
        if window.archive_start is not None:
            window.archive_end = archive_lag(self._node_urls())
        window.generator_rss_kib = rss_kib([p.pid for p in self.procs if p.pid])
        window.tables_held, window.sockets = self.got.tables, self.got.sockets

    def _node_urls(self) -> list[str]:
        return sorted({e.http for e in self.target.endpoints})

    def finish_window(self, window: Window) -> None:
        """After the workers' last batches: the latency samples of moves sent in it."""
        window.fill(self.got.ok, self.got.last_seat, self.got.cards, self.got.lag_batches)

    # -- the run -----------------------------------------------------------------------------

    def seat(self, tables: int, deadline: float) -> bool:
        """Grow to ``tables`` and wait until they are seated (or failed); False at the deadline."""
        self.grow(tables)
        return self.pump_until(
            lambda: (
                self.got.tables + self.got.counts["tables_failed"] >= tables
                and self.got.setting_up == 0
            ),
            deadline,
            None,
        )

    def execute(self) -> int:
        args = self.args
        interrupted = False
        idle: Idle | None = None
        rss_before = 0
        try:
            asyncio.run(warm_up(self.target.endpoints, not args.json))
            self.start_workers()
            time.sleep(0.5)
            rss_before = rss_kib(self.target.node_pids)
            self.generator_rss_before = rss_kib([p.pid for p in self.procs if p.pid])
            idle = self.idle_rates()
            self.machine_speed = machine_speed()
            self.archive_before = archive_lag(self._node_urls())
            self.t0 = time.time()
            deadline = self.t0 + args.duration
            self.next_scan = self.t0
            if args.ramp:
                self.ramp(deadline)
            else:
                seated = self.seat(args.tables, deadline)
                if seated and time.time() < deadline:
                    window = self.open_window("steady", args.tables)
                    self.pump(deadline - DRAIN - time.time())
                    self.close_window(window)
                    self.pump(DRAIN)
        except Stopped:
            interrupted = True
            print("interrupted: stopping the generators; the report is of the run so far",
                  file=sys.stderr)  # fmt: skip
            for window in self.windows:
                if window.end == 0.0:
                    self.close_window(window)
        finally:
            if self.procs:
                self.stop_workers()
        self.archive = read_end(
            self.probe,
            self.pattern,
            self._node_urls(),
            self.archive_before,
            self.target.database,
            lambda: self.stop_asked,  # a Ctrl-C while the outboxes empty: report at once
        )
        if self.probe is not None:
            with contextlib.suppress(Exception):
                self.scan_states()  # at the end: every room of the run is still in the store
            with contextlib.suppress(Exception):
                self.redis_stalls = self.probe.latency_events()
            self.probe.close()
        for window in self.windows:
            self.finish_window(window)
        lines = self.report(idle, rss_before, interrupted)
        print("\n".join(lines), flush=True)
        if args.plot:
            plot(
                Path(args.plot), self.t0, self.got.ok, self.got.last_seat, self.got.timeline,
                self.windows if args.ramp else [], textwrap.fill(lines[0], 130),
                self.fork_times,
            )  # fmt: skip
        if interrupted:
            return 130
        return 1 if sum(self.got.errors.values()) or self.got.counts["stand_in_seat_hands"] else 0

    def ramp(self, deadline: float) -> None:
        args = self.args
        level = min(args.ramp_start, args.tables)
        while True:
            seated = self.seat(level, deadline)
            if not seated or deadline - time.time() < args.ramp_hold / 2:
                return  # out of time: this step cannot be judged
            window = self.open_window(f"ramp {level}", level)
            self.pump(min(args.ramp_hold, deadline - DRAIN - time.time()))
            self.close_window(window)
            self.pump(DRAIN)  # the window's last moves answered (the next step grows after)
            got = self.got
            window.fill(got.ok, got.last_seat, got.cards, got.lag_batches)  # enough to judge
            print(ramp_line(window), file=sys.stderr, flush=True)
            if not window.held() or level >= args.tables:
                return
            level = min(args.tables, level + args.ramp_step)

    # -- the report --------------------------------------------------------------------------

    def headline(self) -> Window | None:
        """The window the per-card figures come from: the last ramp step held, else the first."""
        held = [w for w in self.windows if w.held()]
        return held[-1] if held else (self.windows[0] if self.windows else None)

    def report(self, idle: Idle | None, rss_before: int, interrupted: bool) -> list[str]:
        args, got = self.args, self.got
        out: list[str] = []
        say = out.append
        seating = "a host and 3 bots" if args.bots else "4 players"
        say(
            f"paced: {self.target.description}; {'JSON' if args.json else 'msgpack'} frames, "
            f"{'no ' if args.no_deflate else ''}deflate offered; {seating} per table, "
            f"{'spread over' if args.spread else 'each table on one of'} "
            f"{len(self.target.endpoints)} endpoint(s); think x{args.think:g}; "
            f"{args.procs} generator process(es)" + ("; INTERRUPTED" if interrupted else "")
        )
        seated = got.counts["tables_seated"]
        arrival_span = f"{seated / max(1e-9, self._seating_span()):.1f}" if seated > 1 else "-"
        say(
            f"tables: {seated} seated of {self.grown} arrived (failed "
            f"{got.counts['tables_failed']})  sockets: {got.counts['sockets']} opened  arrival: "
            f"{args.arrival:g} tables/s wanted, "
            f"{arrival_span} seated/s"
        )
        say(
            f"moves: cards {got.counts['cards']} (all seats' {got.counts['table_cards']})  "
            f"passes {got.counts['passes']}  moon choices "
            f"{got.counts['moons']}  hands {got.counts['hands']}  games {got.counts['games']}  "
            f"audits verified {got.counts['audits_verified']} (failed "
            f"{got.counts['audits_failed']})"
        )
        for window in self.windows if args.ramp else []:
            say(ramp_line(window))
        head = self.headline()
        if head is None:
            say("window: none  (the run ended before every table was seated)")
        else:
            say(
                f"window: {head.label}, {head.seconds:.1f} s with {head.tables_held} tables "
                f"({head.sockets} sockets) seated: {head.cards} cards = "
                f"{head.cards / head.seconds:.0f} cards/s"
            )
            say(latency_line("move_latency_ms", head.ok_ms, "send → ok, every move"))
            say(
                latency_line(
                    "last_seat_latency_ms", head.last_seat_ms,
                    "send → the last seat's card_played, every play",
                )
            )  # fmt: skip
            out.extend(per_card_lines(head, idle, len(self.target.node_pids), len(self.redis_pids)))
            say(node_lag_line(head))
            say(node_gc_line(head))
        out.extend(
            store_lines(
                head,
                measured=self.probe is not None or bool(self.scans),
                probed=self.probe is not None,
                state_max=self.state_max,
                scan=(self.pattern, self.scans, self.state_keys),
                fork_times=self.fork_times,
                t0=self.t0,
                redis_stalls=self.redis_stalls,
            )
        )
        out.extend(
            resource_lines(
                head,
                nodes=bool(self.target.node_pids),
                rss_before=rss_before,
                bots=args.bots,
                procs=args.procs,
                generator_rss_before=self.generator_rss_before,
                machine_speed=self.machine_speed,
                run_lag=self.got.lag,
            )
        )
        if self.archive is not None:
            out.extend(archive_lines(self.archive))
        humans = 1 if args.bots else 4
        say(
            f"stand_in_seat_hands: {got.counts['stand_in_seat_hands']}  (seats the audit marked "
            f"absent, of {humans * got.counts['hands']} human seat-hands)"
        )
        errors = sum(got.errors.values())
        detail = ", ".join(f"{k} x{v}" for k, v in got.errors.most_common(8))
        say(f"errors: {errors}" + (f"  ({detail})" if detail else ""))
        if args.plot:
            say(f"plot: {args.plot}")
        if args.ramp:
            held = [w.tables for w in self.windows if w.held()]
            say(f"tables_held_p99_50ms: {max(held) if held else 0}")
        else:
            say(f"paced_latency_ms_p99: {head.p99() if head else math.nan:.1f}")
        return out

    def _seating_span(self) -> float:
        seated = [at for at, n in self.got.timeline if n > 0]
        full = [at for at, n in self.got.timeline if n >= self.got.counts["tables_seated"]]
        return (full[0] - self.t0) if seated and full else math.inf
