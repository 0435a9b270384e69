"""Load generator: whole games of socket players against real server nodes, and a measured report.

    python -m load_tests.load                                  # 3 nodes started here, 10 tables
    python -m load_tests.load --start 3 --tables 25 --duration 60
    python -m load_tests.load --start 1 --tables 2 --duration 20 --json
    python -m load_tests.load --url ws://127.0.0.1:8000/ws \\
        [--redis-url redis://127.0.0.1:6390/0] [--pid PID --pid PID …]

Without --url it starts a private redis-server (append-only file, everysec, as deploy/redis.conf,
in a temp dir) and N nodes (``python -m server``) on free loopback ports with one shared
HEARTS_SECRET, no bot think time and no pause between hands, and stops them all at the end.
With --url it drives a running service (deploy/local-cluster.sh prints the line to use); what
it cannot see (node memory and CPU without --pid, Redis without --redis-url) is reported as not
measured.

T tables of four players (load_tests/scenarios.py) connect, sit down, then play whole games as
fast as the server answers. Bounded: only loopback targets, at most 250 tables, 8 nodes, 20
games per table, and play stops at --duration (at most 600 s) whatever happens. Every figure of
the report is measured in this run; the last line is ``move_latency_ms_p99: N``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from load_tests.cluster import (
    Cluster,
    check_target,
    endpoint_for,
    stop_on_sigterm,
    warm_up,
)
from load_tests.measures import LoopLag, RedisProbe, cpu_seconds, percentile, rss_kib
from load_tests.scenarios import Endpoint, Stats, Table

MAX_TABLES = 250
MAX_GAMES = 20
MAX_DURATION = 600.0
SETUP_TIMEOUT = 60.0  # connecting and seating every table; not part of --duration
IDLE_WINDOW = 2.0  # seconds of seated, idle players to measure Redis' background rate
CONNECT_AT_ONCE = 8  # tables connecting concurrently: a burst, not a stampede


# -- the run ---------------------------------------------------------------------------------


@dataclass
class Target:
    endpoints: list[Endpoint]
    node_pids: list[int]
    redis_url: str | None
    description: str


async def run(args: argparse.Namespace, target: Target) -> int:
    stats = Stats()
    loop = asyncio.get_running_loop()
    tables = [
        Table(i, target.endpoints, binary=not args.json, target=args.target, seed=args.seed)
        for i in range(args.tables)
    ]
    probe = RedisProbe(target.redis_url) if target.redis_url else None
    # Redis' CPU when it runs on this machine (always, with --start: it was started here).
    redis_pids = [probe.redis_pid()] if probe is not None else []
    redis_pids = [pid for pid in redis_pids if Path(f"/proc/{pid}").exists()]
    lag = LoopLag()
    try:
        await warm_up(target.endpoints, not args.json)
        await asyncio.sleep(0.5)
        rss_before = rss_kib(target.node_pids)
        redis_before_connect = probe.snapshot() if probe else None

        # Connect and seat every table (bounded concurrency, bounded time).
        gate = asyncio.Semaphore(CONNECT_AT_ONCE)

        async def prepare(table: Table) -> None:
            async with gate:
                await table.connect(stats)
                await table.sit_down()

        setup_started = loop.time()
        async with asyncio.timeout(SETUP_TIMEOUT):
            await asyncio.gather(*(prepare(t) for t in tables))
        setup_time = loop.time() - setup_started
        await asyncio.sleep(0.5)  # let the nodes settle the joins before reading memory
        rss_connected = rss_kib(target.node_pids)

        # Redis' background rate with everyone seated and idle: scheduler polls, pings, …
        idle_before = probe.snapshot() if probe else None
        await asyncio.sleep(IDLE_WINDOW)
        idle_after = probe.snapshot() if probe else None

        frames_before = sum(t.frames_received() for t in tables)
        redis_before = probe.snapshot() if probe else None
        own_before = probe.own_calls if probe else 0
        cpu_nodes_before = cpu_seconds(target.node_pids)
        cpu_redis_before = cpu_seconds(redis_pids)
        cpu_self_before = time.process_time()
        lag.start()
        started = loop.time()
        deadline = started + args.duration
        await asyncio.gather(*(t.play(args.games, stats, deadline) for t in tables))
        elapsed = loop.time() - started
        lag.stop()
        cpu_self = time.process_time() - cpu_self_before
        cpu_nodes = cpu_seconds(target.node_pids) - cpu_nodes_before
        cpu_redis = cpu_seconds(redis_pids) - cpu_redis_before
        redis_after = probe.snapshot() if probe else None
        # INFO counts the commands before it, so the delta holds our first snapshot and any
        # call made in between, but not the second snapshot.
        own_during = (probe.own_calls - own_before) if probe else 0
        frames = sum(t.frames_received() for t in tables) - frames_before
        rss_after = rss_kib(target.node_pids)
    finally:
        lag.stop()
        await asyncio.gather(*(t.close() for t in tables), return_exceptions=True)
        if probe is not None:
            probe.close()

    # -- the report --------------------------------------------------------------------------
    out: list[str] = []
    say = out.append
    say(f"load: {target.description}, {'JSON' if args.json else 'msgpack'} frames")
    say(
        f"tables: {args.tables}  players: {4 * args.tables}  games per table: {args.games}  "
        f"target score: {args.target}  time limit: {args.duration:g} s"
    )
    say(f"connections: {stats.connections}  (set up and seated in {setup_time:.1f} s)")
    wanted = args.tables * args.games
    say(
        f"games_finished: {stats.games_finished} of {wanted}  "
        f"(unfinished at the time limit: {stats.games_unfinished})"
    )
    say(f"hands_played: {stats.hands}  fair-deal audits verified: {stats.audits_verified}")
    say(
        f"moves_acknowledged: {stats.moves}  (cards played {stats.plays}, passes "
        f"{stats.passes}, moon choices {stats.moons}) in {elapsed:.1f} s = "
        f"{stats.moves / elapsed:.0f} moves/s"
    )
    lat = sorted(stats.move_latencies)
    ms = {
        name: percentile(lat, q) * 1000 for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
    }
    ms["max"] = (lat[-1] if lat else float("nan")) * 1000
    say(
        "move_latency_ms: "
        + "  ".join(f"{k} {v:.1f}" for k, v in ms.items())
        + f"  (send → ok, {len(lat)} moves)"
    )
    say(f"frames_received: {frames} in {elapsed:.1f} s = {frames / elapsed:.0f} frames/s")
    if target.node_pids:
        per_conn = (rss_connected - rss_before) / max(1, stats.connections)
        say(
            f"server_rss_kib: before {rss_before}  connected {rss_connected}  after games "
            f"{rss_after}  (VmRSS of {len(target.node_pids)} node process(es))"
        )
        say(
            f"server_memory_per_connection_kib: {per_conn:.1f}  ((connected - before) / "
            f"{stats.connections} sockets, authenticated and seated)"
        )
    else:
        say("server_rss_kib: not measured (no node pids: pass --pid for each node)")
        say("server_memory_per_connection_kib: not measured")
    if probe is not None:
        assert redis_before and redis_after and idle_before and idle_after
        assert redis_before_connect is not None
        commands = redis_after.total_commands - redis_before.total_commands - own_during
        idle_rate = (idle_after.total_commands - idle_before.total_commands - 1) / IDLE_WINDOW
        cards = max(1, stats.plays)
        net = (commands - idle_rate * elapsed) / cards
        say(
            f"redis_commands_per_card: {commands / cards:.2f}  ({commands} commands during play "
            f"/ {stats.plays} cards; idle rate {idle_rate:.0f}/s measured over "
            f"{IDLE_WINDOW:g} s; net of it {net:.2f})"
        )
        delta = Counter(
            {
                name: calls - redis_before.per_command.get(name, 0)
                for name, calls in redis_after.per_command.items()
                if name != "info"
            }
        )
        top = ", ".join(f"{name} {calls / cards:.2f}" for name, calls in delta.most_common(6))
        say(f"redis_top_commands_per_card: {top}")
        grown = redis_after.used_memory - redis_before_connect.used_memory
        say(
            f"redis_used_memory_kib: {redis_after.used_memory // 1024}  (+{grown // 1024} since "
            f"before connecting, {grown / 1024 / max(1, args.tables):.1f} per table)"
        )
    else:
        say("redis_commands_per_card: not measured (pass --redis-url)")
    if target.node_pids:
        cores = os.cpu_count() or 0
        redis_cpu = f"redis {cpu_redis / elapsed:.2f}  " if redis_pids else ""
        say(
            f"cpu_cores_busy: nodes {cpu_nodes / elapsed:.2f}  {redis_cpu}load generator "
            f"{cpu_self / elapsed:.2f}  (of {cores} on this machine)"
        )
    lags = sorted(lag.samples)
    say(
        f"generator_loop_lag_ms: p50 {percentile(lags, 0.5) * 1000:.1f}  p99 "
        f"{percentile(lags, 0.99) * 1000:.1f}  max {(lags[-1] if lags else 0) * 1000:.1f}  "
        "(this process' own delay, inside every latency above)"
    )
    errors = sum(stats.errors.values())
    detail = ", ".join(f"{k} x{v}" for k, v in stats.errors.most_common())
    say(f"errors: {errors}" + (f"  ({detail})" if detail else ""))
    say(f"move_latency_ms_p99: {ms['p99']:.1f}")
    print("\n".join(out), flush=True)
    return 1 if errors else 0


# -- arguments and targets -------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m load_tests.load", description=__doc__.split("\n\n")[0]
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", help="a running service's WebSocket URL (loopback only)")
    where.add_argument("--start", type=int, metavar="N", help="start N nodes here (default 3)")
    parser.add_argument("--redis-url", help="with --url: its Redis, to count commands")
    parser.add_argument(
        "--pid", type=int, action="append", default=[], help="with --url: a node's pid (repeat)"
    )
    parser.add_argument("--tables", type=int, default=10, help=f"tables of four (≤ {MAX_TABLES})")
    parser.add_argument("--games", type=int, default=1, help=f"games per table (≤ {MAX_GAMES})")
    parser.add_argument(
        "--duration", type=float, default=60.0, help=f"play time limit, s (≤ {MAX_DURATION:g})"
    )
    parser.add_argument("--target", type=int, choices=(50, 100), default=50, help="game target")
    parser.add_argument("--seed", type=int, default=0, help="players' random choices")
    codec = parser.add_mutually_exclusive_group()
    codec.add_argument("--binary", dest="json", action="store_false", help="msgpack (default)")
    codec.add_argument("--json", dest="json", action="store_true", help="JSON text frames")
    parser.set_defaults(json=False)  # store_false alone would make JSON the default
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= MAX_TABLES:
        parser.error(f"--tables must be 1..{MAX_TABLES}")
    if not 1 <= args.games <= MAX_GAMES:
        parser.error(f"--games must be 1..{MAX_GAMES}")
    if not 0 < args.duration <= MAX_DURATION:
        parser.error(f"--duration must be in (0, {MAX_DURATION:g}]")
    check_target(parser, args, default_nodes=3)
    return args


async def run_until_stopped(args: argparse.Namespace, target: Target) -> int:
    """Ctrl-C or SIGTERM cancel the run: sockets close, no report, exit code 130."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        return await run(args, target)
    except asyncio.CancelledError:
        print("interrupted: no report", file=sys.stderr)
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.url is not None:
        target = Target([endpoint_for(args.url)], args.pid, args.redis_url, args.url)
        return asyncio.run(run_until_stopped(args, target))
    cluster = Cluster(args.start)
    try:
        with stop_on_sigterm():
            cluster.start()
        target = Target(
            cluster.endpoints,
            cluster.node_pids,
            cluster.redis_url,
            f"{args.start} node(s) started here, private redis-server (AOF everysec)",
        )
        return asyncio.run(run_until_stopped(args, target))
    except KeyboardInterrupt:
        print("interrupted while starting", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        for i in range(len(cluster.node_procs)):
            tail = cluster.log_tail(f"node{i + 1}")
            if tail:
                print(f"--- node{i + 1} log ---\n{tail}", file=sys.stderr)
        return 2
    finally:
        # Ignore further Ctrl-C / SIGTERM while the nodes drain and Redis stops.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
