"""Room store commit benchmark: commits per second and commit latency percentiles.

    python -m load_tests.bench_store                     # Redis: starts a private redis-server
    python -m load_tests.bench_store --redis redis://h:p # Redis: an existing server (flushes
                                                         # nothing; uses its own key prefix)
    python -m load_tests.bench_store --memory            # the in-process store

Each worker drives rooms through load → commit with a room-sized state and a couple of events
per commit, the way a node applies moves; with fewer rooms than workers they contend and the
compare-and-set conflicts are counted. A subscriber watching every room drains the published
events, as a node would. The last line printed is ``commits_per_second: N``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import redis

from server.store import RoomStore, StoredEvent, open_store


@dataclass
class Results:
    latencies: list[float] = field(default_factory=list)  # seconds, one per commit attempt
    commits: int = 0
    conflicts: int = 0
    delivered: int = 0
    elapsed: float = 0.0  # seconds of the measured part


@contextmanager
def private_redis() -> Iterator[str]:
    """A throwaway redis-server on a free local port, killed afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server not found: install it or pass --redis URL")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="bench-redis-")
    command = [binary, "--save", "", "--appendonly", "no", "--dir", workdir]
    command += ["--port", str(port), "--bind", "127.0.0.1"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit("the private redis-server did not start") from None
                time.sleep(0.05)
        client.close()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))
    return sorted_values[index]


async def drain(store: RoomStore, rooms: list[str], results: Results, ready: asyncio.Event) -> None:
    sub = store.subscriber()
    try:
        for room in rooms:
            await sub.add(room)
        ready.set()
        async for _ in sub:
            results.delivered += 1
    finally:
        await sub.close()


async def worker(
    store: RoomStore,
    rooms: list[str],
    index: int,
    quota: int,
    args: argparse.Namespace,
    results: Results,
) -> None:
    state = os.urandom(args.state_bytes)
    payload = os.urandom(args.event_bytes)
    room = rooms[index % len(rooms)]
    done = 0
    while done < quota:
        snap = await store.load_room(room)
        assert snap is not None
        # The seq counter lives in the state in the real service; here the version stands in.
        base = snap.version * args.events
        events = [StoredEvent(base + i, payload) for i in range(args.events)]
        deadline = time.time() + 30
        started = time.perf_counter()
        ok = await store.commit(room, snap.version, state, events, deadline)
        results.latencies.append(time.perf_counter() - started)
        if ok:
            done += 1
            results.commits += 1
        else:
            results.conflicts += 1


async def run(store: RoomStore, args: argparse.Namespace) -> Results:
    tag = uuid.uuid4().hex[:8]
    rooms = [f"bench-{tag}-{i}" for i in range(args.rooms)]
    for room in rooms:
        await store.create_room(room, b"", [], None)
    results = Results()
    drainer: asyncio.Task[None] | None = None
    if not args.no_subscriber:
        ready = asyncio.Event()
        drainer = asyncio.create_task(drain(store, rooms, results, ready))
        await ready.wait()

    # Warm up connections and the script cache, then measure from zero.
    await asyncio.gather(
        *(worker(store, rooms, i, 2, args, Results()) for i in range(args.concurrency))
    )
    quota, extra = divmod(args.commits, args.concurrency)
    stats_before = script_stats(args.url)
    started = time.perf_counter()
    await asyncio.gather(
        *(
            worker(store, rooms, i, quota + (i < extra), args, results)
            for i in range(args.concurrency)
        )
    )
    elapsed = results.elapsed = time.perf_counter() - started
    stats_after = script_stats(args.url)
    results.latencies.sort()
    if drainer is not None:
        await asyncio.sleep(0.2)  # let the last publishes arrive
        drainer.cancel()
        await asyncio.gather(drainer, return_exceptions=True)

    lat = results.latencies
    print(f"backend: {args.backend}  rooms: {args.rooms}  workers: {args.concurrency}")
    print(
        f"state: {args.state_bytes} B  events/commit: {args.events} x {args.event_bytes} B  "
        f"subscriber: {'no' if args.no_subscriber else 'yes'}"
    )
    print(f"commits: {results.commits}  conflicts: {results.conflicts}  elapsed: {elapsed:.2f} s")
    if not args.no_subscriber:
        print(f"events delivered to the subscriber: {results.delivered}")
    print(
        "commit latency ms: "
        + "  ".join(
            f"{name} {percentile(lat, q) * 1000:.3f}"
            for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999))
        )
        + f"  max {lat[-1] * 1000:.3f}"
    )
    if stats_before is not None and stats_after is not None and results.commits:
        # Redis's own time in the commit script: its CPU per commit, whatever the client costs.
        calls = stats_after[0] - stats_before[0]
        usec = stats_after[1] - stats_before[1]
        print(
            f"redis_script_us_per_commit: {usec / max(calls, 1):.1f}  "
            f"({calls} script calls, conflicts included)"
        )
    print(f"commits_per_second: {round(results.commits / elapsed)}")
    return results


def script_stats(url: str | None) -> tuple[int, int] | None:
    """Redis's count of EVALSHA calls and the microseconds it spent in them, or None (the
    in-process store)."""
    if url is None:
        return None
    client = redis.Redis.from_url(url)
    try:
        stats = client.info("commandstats").get("cmdstat_evalsha", {})
    finally:
        client.close()
    return int(stats.get("calls", 0)), int(stats.get("usec", 0))


async def main_async(args: argparse.Namespace) -> None:
    store = open_store(args.url, prefix=f"bench-{uuid.uuid4().hex[:8]}")
    try:
        await run(store, args)
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--redis", metavar="URL", help="an existing Redis (default: start one)")
    where.add_argument("--memory", action="store_true", help="the in-process store")
    parser.add_argument("--rooms", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=64, help="concurrent workers")
    parser.add_argument("--commits", type=int, default=20_000, help="measured commits")
    parser.add_argument("--state-bytes", type=int, default=1500)
    parser.add_argument("--events", type=int, default=2, help="events per commit")
    parser.add_argument("--event-bytes", type=int, default=120)
    parser.add_argument("--no-subscriber", action="store_true")
    args = parser.parse_args()

    if args.memory:
        args.backend, args.url = "memory", None
        asyncio.run(main_async(args))
    elif args.redis:
        args.backend, args.url = f"redis {args.redis}", args.redis
        asyncio.run(main_async(args))
    else:
        with private_redis() as url:
            args.backend, args.url = "redis (private redis-server)", url
            asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
