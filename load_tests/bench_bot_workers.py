"""How many bot tables one bot worker core carries: ``bot_tables_per_worker_core``.

    nice python -m load_tests.bench_bot_workers
    nice python -m load_tests.bench_bot_workers --start-tables 20 --step 10 --hold 45 \\
        --max-tables 200 --duration 600

Paced tables (``load_tests.paced_table`` with ``--bots``: one human thinking as people do, and
three strong bots) against one node here (private redis-server, ``HEARTS_BOT_QUEUE=redis``)
whose every bot decision is searched by ONE ``python -m server.bot_worker`` pinned to one core
(``taskset``; the node, Redis and the generators are kept off that core). The server's default
clocks: the bots think 0.8 s, 2 s between hands. Tables are added step by step, each step held
``--hold`` seconds once seated, until the bots' answer p99 passes 1.5 s or a fallback move is
played in the step; the last step within both is the figure. The bots' answer is what the human
at the table sees: from the card before a bot's card to the bot's card (its 0.8 s think time
and its wait for a decision; a hand's first card, which follows the pass, is left out).

Then twice that many tables, held as long: the fallbacks are counted, and the longest any seat
waited past its think time is printed (the deadline bounds it: HEARTS_BOT_DEADLINE, 0.8 s).

With ``--workers 2 --kill-every 10`` it runs no ramp: ``--start-tables`` tables are held
``--hold`` s while a worker is killed with SIGKILL every 10 s and started again, and it prints
``bot_worker_kills``, ``stuck_tables`` (tables without a card or a deal for 30 s), ``lost_moves``
(moves refused or unsent, seats out of time, failed hand audits: every audit is verified) and the
fallbacks.

Lines: ``machine_rules_hands_per_second`` (measured first), one line per step, then
``bot_tables_per_worker_core``, ``bot_fallback_moves`` (at that load), ``bot_answer_ms_p99``,
``bot_worker_core_busy`` (the worker's CPU time over the step's wall time), and the twice-load
lines. Bounded: loopback only, at most 600 tables, 900 s.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing
import os
import queue
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.cluster import Cluster, die_with_parent
from load_tests.measures import cpu_seconds, histogram_quantile, node_histogram, percentile
from load_tests.paced_args import BOT_THINK, MAX_TABLES
from load_tests.paced_table import TableConfig
from load_tests.paced_worker import Collector, WorkerSpec, worker_main
from load_tests.think import SERVER_BETWEEN_HANDS

MAX_BENCH_TABLES = 600
MAX_DURATION = 900.0
ANSWER_BAR = 1.5  # s: the bots' answer p99 a worker core must hold
WAIT_BAR = 1.0  # s: past its think time, no seat waits longer under twice the load
SEATING = 60.0  # s a step may take to seat its tables


@dataclass
class Step:
    tables: int
    gaps: list[float]  # s, bot answers seen in the step's window
    fallbacks: float
    busy: float  # the worker's CPU seconds over the window's wall seconds
    queue_wait_p99: float  # s, from the node's histogram
    cards: int
    errors: dict[str, int]
    reasons: dict[str, float]  # fallbacks by reason
    starved: float  # of the worker's runnable time, the share it waited for a CPU
    node_lag_p99: float  # s, the node's event loop
    load: float  # the machine's load average (1 min) at the step's end
    kills: int = 0  # workers killed with SIGKILL during the step
    stuck: int = 0  # the most tables seen without a card or a deal for 30 s at once
    audits_failed: int = 0
    audits_verified: int = 0
    hands: int = 0

    @property
    def p99(self) -> float:
        return percentile(sorted(self.gaps), 0.99)

    @property
    def ok(self) -> bool:
        return bool(self.gaps) and self.p99 <= ANSWER_BAR and self.fallbacks == 0

    def line(self) -> str:
        gaps = sorted(self.gaps)
        return (
            f"  {self.tables:4d} tables: bot answer p50 {percentile(gaps, 0.5) * 1000:.0f} ms, "
            f"p99 {self.p99 * 1000:.0f} ms, max {(gaps[-1] if gaps else math.nan) * 1000:.0f} ms "
            f"over {len(gaps)} bot cards; fallbacks {self.fallbacks:g}; "
            + (
                f"worker core busy {self.busy:.0%} (waited for a CPU {self.starved:.0%} of its "
                "runnable time); "
                if not self.kills
                else ""
            )
            + f"queue wait p99 {self.queue_wait_p99 * 1000:.0f} ms; node loop lag p99 "
            f"{self.node_lag_p99 * 1000:.0f} ms; machine load {self.load:.1f}"
            + (f"; fallbacks by reason {self.reasons}" if self.reasons else "")
            + (f"; errors {self.errors}" if self.errors else "")
            + (f"; {self.kills} workers killed, {self.hands} hands" if self.kills else "")
        )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m load_tests.bench_bot_workers")
    parser.add_argument("--start-tables", type=int, default=20)
    parser.add_argument("--step", type=int, default=10, help="tables added per step")
    parser.add_argument("--hold", type=float, default=45.0, help="s each step is measured")
    parser.add_argument("--max-tables", type=int, default=200)
    parser.add_argument("--arrival", type=float, default=2.0, help="tables arriving per second")
    parser.add_argument("--procs", type=int, default=1, help="generator processes")
    parser.add_argument("--duration", type=float, default=600.0, help="the whole run's bound, s")
    parser.add_argument("--no-twice", action="store_true", help="skip the twice-load step")
    parser.add_argument("--worker-core", type=int, help="the core the workers are pinned to")
    parser.add_argument("--workers", type=int, default=1, help="bot worker processes")
    parser.add_argument(
        "--kill-every",
        type=float,
        default=0.0,
        help="s: instead of the ramp, --start-tables tables held --hold s while a worker is "
        "killed with SIGKILL this often (and started again); needs --workers 2 or more",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.start_tables <= args.max_tables <= min(MAX_BENCH_TABLES, MAX_TABLES):
        parser.error(f"need 1 <= --start-tables <= --max-tables <= {MAX_BENCH_TABLES}")
    if args.step < 1 or args.hold <= 0 or not 0 < args.duration <= MAX_DURATION:
        parser.error(f"--step >= 1, --hold > 0, --duration in (0, {MAX_DURATION:g}]")
    if not 1 <= args.workers <= 8 or args.kill_every < 0:
        parser.error("--workers must be 1..8, --kill-every >= 0")
    if args.kill_every and args.workers < 2:
        parser.error("--kill-every needs --workers 2 or more: one carries on while one restarts")
    return args


def node_counter(http: str, name: str) -> dict[str, float]:
    """A counter of the node's /metrics by its labels' values."""
    with urllib.request.urlopen(f"{http}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                key = ",".join(sample.labels.values())
                found[key] = found.get(key, 0.0) + float(sample.value)
    return found


def scheduled(pid: int) -> tuple[float, float]:
    """Seconds a process's threads ran, and waited runnable for a CPU (/proc schedstat)."""
    ran = waited = 0
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/schedstat") as f:
                fields = f.read().split()
                ran, waited = ran + int(fields[0]), waited + int(fields[1])
    return ran / 1e9, waited / 1e9


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.cluster: Cluster | None = None
        self.workers: list[subprocess.Popen[bytes]] = []
        self.kills = 0
        self.procs: list[multiprocessing.process.BaseProcess] = []
        self.controls: list[Any] = []
        self.results: Any = None
        self.got = Collector()
        self.grown = 0
        self.started = time.monotonic()
        cores = sorted(os.sched_getaffinity(0))
        self.worker_core = args.worker_core if args.worker_core is not None else cores[-1]
        self.other_cores = {c for c in cores if c != self.worker_core} or set(cores)

    # -- processes -----------------------------------------------------------------------------

    def start(self) -> None:
        # Everything but the worker keeps off its core: this process and all it starts.
        os.sched_setaffinity(0, self.other_cores)
        settings = {
            "HEARTS_BOT_QUEUE": "redis",
            "HEARTS_BOT_THINK": f"{BOT_THINK:g}",
            "HEARTS_BETWEEN_HANDS": f"{SERVER_BETWEEN_HANDS:g}",
            "HEARTS_MAX_CONNECTIONS": str(MAX_BENCH_TABLES + 1000),
        }
        self.cluster = Cluster(1, settings=settings)
        self.cluster.start()
        self.workers = [self.spawn_worker(k) for k in range(self.args.workers)]
        time.sleep(3.0)  # their start-up (the bots loaded and warmed) before the first table
        if any(w.poll() is not None for w in self.workers):
            raise RuntimeError(f"a bot worker exited: {self.cluster.log_tail('bot-worker0')}")
        # Audits verified in a kill run: a lost or doubled move would fail a hand's audit.
        config = TableConfig(bots=True, target=100, think=1.0, verify=bool(self.args.kill_every))
        ctx = multiprocessing.get_context("spawn")
        self.results = ctx.Queue()
        for index in range(self.args.procs):
            control = ctx.Queue()
            spec = WorkerSpec(index, self.args.procs, self.cluster.endpoints, config)
            proc = ctx.Process(target=worker_main, args=(spec, control, self.results))
            proc.start()
            self.procs.append(proc)
            self.controls.append(control)
        self.pump_until(lambda: len(self.got.ready) == self.args.procs, 60)

    def spawn_worker(self, k: int) -> subprocess.Popen[bytes]:
        assert self.cluster is not None
        env = {**os.environ, "REDIS_URL": self.cluster.redis_url, "LOG_LEVEL": "WARNING"}
        env["NODE_ID"] = f"bench-bot-worker{k}"
        log = (self.cluster.workdir / f"bot-worker{k}.log").open("ab")
        taskset = shutil.which("taskset")
        pin = [taskset, "-c", str(self.worker_core)] if taskset else []
        worker = subprocess.Popen(
            [*pin, sys.executable, "-m", "server.bot_worker"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
        )
        if not taskset:
            os.sched_setaffinity(worker.pid, {self.worker_core})
        return worker

    def kill_one(self) -> None:
        """SIGKILL the next worker, and start it again (its name, so its consumer, kept)."""
        k = self.kills % len(self.workers)
        self.workers[k].kill()
        self.workers[k].wait(10)
        self.workers[k] = self.spawn_worker(k)
        self.kills += 1

    def stop(self) -> None:
        for control in self.controls:
            with contextlib.suppress(Exception):
                control.put(("stop",))
        self.pump_until(lambda: len(self.got.done) == len(self.procs), 30)
        for proc in self.procs:
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
        for worker in self.workers:
            if worker.poll() is None:
                worker.terminate()
                worker.wait(15)
        if self.cluster is not None:
            self.cluster.stop()

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            with contextlib.suppress(queue.Empty):
                self.got.take(self.results.get(timeout=min(0.2, left)))

    def pump_until(self, done: Any, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while not done():
            if time.monotonic() >= end:
                return False
            self.pump(0.1)
        return True

    # -- steps ---------------------------------------------------------------------------------

    def grow(self, tables: int) -> None:
        for control in self.controls:
            control.put(("grow", self.grown, tables, time.time(), self.args.arrival))
        self.grown = tables

    def left(self) -> float:
        duration: float = self.args.duration
        return duration - (time.monotonic() - self.started)

    def step(self, tables: int, hold: float) -> Step | None:
        """``tables`` seated, then measured for ``hold`` s; None if the run's time is out."""
        self.grow(tables)
        seated = lambda: self.got.tables + self.got.counts["tables_failed"] >= tables  # noqa: E731
        self.pump_until(seated, SEATING)
        self.pump(3.0)  # the last arrivals' first passes
        if self.left() < hold:
            return None
        assert self.cluster is not None
        pids = [w.pid for w in self.workers]
        http = self.cluster.endpoints[0].http
        fallbacks = node_counter(http, "hearts_bot_fallback_moves_total")
        waits = node_histogram([http], "hearts_bot_queue_wait_seconds") or {}
        lags = node_histogram([http], "hearts_event_loop_lag_seconds") or {}
        ran, waited = map(sum, zip(*(scheduled(pid) for pid in pids), strict=True))
        cpu, wall = cpu_seconds(pids), time.monotonic()
        gaps_from, cards_from = len(self.got.bot_gaps), self.got.counts["table_cards"]
        errors_from = dict(self.got.errors)
        counts_from = dict(self.got.counts)
        kills_from, stuck = self.kills, 0
        ends, next_kill = wall + hold, wall + (self.args.kill_every or math.inf)
        while (now := time.monotonic()) < ends:
            self.pump(min(1.0, ends - now))
            stuck = max(stuck, self.got.stale_tables)
            if time.monotonic() >= next_kill:
                self.kill_one()
                next_kill += self.args.kill_every
        pids = [w.pid for w in self.workers]  # the killed ones' time is lost with them
        busy = (cpu_seconds(pids) - cpu) / (time.monotonic() - wall)
        waits_after = node_histogram([http], "hearts_bot_queue_wait_seconds") or {}
        lags_after = node_histogram([http], "hearts_event_loop_lag_seconds") or {}
        ran_after, waited_after = map(sum, zip(*(scheduled(pid) for pid in pids), strict=True))
        runnable = (ran_after - ran) + (waited_after - waited)
        after = node_counter(http, "hearts_bot_fallback_moves_total")
        reasons = {
            k: v - fallbacks.get(k, 0.0) for k, v in after.items() if v > fallbacks.get(k, 0)
        }
        errors = {
            k: v - errors_from.get(k, 0)
            for k, v in self.got.errors.items()
            if v > errors_from.get(k, 0)
        }
        return Step(
            tables=tables,
            gaps=[gap for _, gap in self.got.bot_gaps[gaps_from:]],
            fallbacks=sum(reasons.values()),
            busy=busy,
            queue_wait_p99=histogram_quantile(waits, waits_after, 0.99),
            cards=self.got.counts["table_cards"] - cards_from,
            errors=errors,
            reasons=reasons,
            starved=(waited_after - waited) / runnable if runnable > 0 else 0.0,
            node_lag_p99=histogram_quantile(lags, lags_after, 0.99),
            load=os.getloadavg()[0],
            kills=self.kills - kills_from,
            stuck=stuck,
            audits_failed=self.got.counts["audits_failed"] - counts_from.get("audits_failed", 0),
            hands=self.got.counts["hands"] - counts_from.get("hands", 0),
            audits_verified=self.got.counts["audits_verified"]
            - counts_from.get("audits_verified", 0),
        )

    def run(self) -> int:
        args = self.args
        print(machine_speed_line(machine_speed()), flush=True)
        self.start()
        print(
            f"one node (private redis-server, HEARTS_BOT_QUEUE=redis), {args.workers} bot "
            f"worker(s) pinned to core {self.worker_core} (the rest on "
            f"{sorted(self.other_cores)}); tables of one "
            f"paced human and three strong bots, bots think {BOT_THINK:g} s",
            flush=True,
        )
        if args.kill_every:
            return self.kill_run()
        held: Step | None = None
        tables = args.start_tables
        while tables <= args.max_tables:
            step = self.step(tables, args.hold)
            if step is None:
                print("  (the run's --duration is out)")
                break
            print(step.line(), flush=True)
            if not step.ok:
                break
            held = step
            tables += args.step
        twice: Step | None = None
        if held is not None and not args.no_twice and 2 * held.tables <= MAX_BENCH_TABLES:
            twice = self.step(2 * held.tables, args.hold)
            if twice is not None:
                print("twice that load:\n" + twice.line(), flush=True)
        self.report(held, twice)
        return 0 if held is not None else 1

    def kill_run(self) -> int:
        """--start-tables tables held --hold s while a worker is killed every --kill-every s."""
        args = self.args
        print(
            f"{args.workers} bot workers; one killed with SIGKILL every {args.kill_every:g} s "
            "and started again; every hand's audit verified",
            flush=True,
        )
        step = self.step(args.start_tables, args.hold)
        if step is None:
            print("  (the run's --duration is out)")
            return 1
        print(step.line(), flush=True)
        lost = sum(step.errors.values()) + step.audits_failed
        print(f"bot_worker_kills: {step.kills}")
        print(f"stuck_tables: {step.stuck}  (no card and no deal for 30 s)")
        print(f"lost_moves: {lost}  (moves refused or unsent, seats out of time, failed audits)")
        print(f"hands_started: {step.hands}")
        print(f"audits_verified: {step.audits_verified}  (failed: {step.audits_failed})")
        print(f"bot_fallback_moves: {step.fallbacks:g}  {step.reasons or ''}")
        beyond = max(step.gaps, default=math.nan) - BOT_THINK
        print(f"bot_wait_past_think_ms_max: {beyond * 1000:.0f}")
        return 0 if step.stuck == 0 and lost == 0 else 1

    def report(self, held: Step | None, twice: Step | None) -> None:
        if held is None:
            print("bot_tables_per_worker_core: < start (the first step failed)")
            return
        print(f"bot_tables_per_worker_core: {held.tables}")
        print(f"bot_fallback_moves: {held.fallbacks:g}  (at {held.tables} tables)")
        print(f"bot_answer_ms_p99: {held.p99 * 1000:.0f}  (at {held.tables} tables)")
        print(f"bot_worker_core_busy: {held.busy:.2f}  (at {held.tables} tables)")
        if twice is not None:
            beyond = max(twice.gaps, default=math.nan) - BOT_THINK
            print(f"bot_fallback_moves_twice_load: {twice.fallbacks:g}  ({twice.tables} tables)")
            print(f"bot_answer_ms_p99_twice_load: {twice.p99 * 1000:.0f}")
            print(
                f"bot_wait_past_think_ms_max_twice_load: {beyond * 1000:.0f}  "
                f"(bar {WAIT_BAR * 1000:.0f}: {'kept' if beyond <= WAIT_BAR else 'NOT kept'})"
            )


def main(argv: list[str] | None = None) -> int:
    bench = Bench(parse_args(argv))
    try:
        return bench.run()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        bench.stop()


if __name__ == "__main__":
    sys.exit(main())
