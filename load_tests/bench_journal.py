"""The embedded node's journal: what writing each commit through to SQLite costs.

    python -m load_tests.bench_journal                  # 20,000 commits each way, about 20 s
    python -m load_tests.bench_journal --dir PATH       # the journal on another disk

Commits the way a node applies moves (a room-sized state, two events, a deadline; every
``--archive-every``-th commit also archives a finished hand's two records) over ``--rooms``
rooms, one after another on one event loop, to the in-process store alone, then journaled with
``synchronous=NORMAL`` (the embedded node's) and with ``FULL`` (fewer commits: each syncs the
disk). Each commit's wall time is the time the event loop, and so every table on the node, waits
for it. Then the journal is opened again from its file (``reopen_ms``: what a restart adds
before the node listens). Prints ``name: value`` lines, the machine's speed first; the last
line is ``journal_us_per_commit``, the extra time per commit of the NORMAL journal over memory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.bench_store import percentile
from server.store import Archive, MemoryRoomStore, StoredEvent
from server.store.sqlite import open_room_store


async def commit_times(
    store: MemoryRoomStore, commits: int, args: argparse.Namespace
) -> list[float]:
    """Seconds per commit, sorted."""
    state = os.urandom(args.state_bytes)
    payload = os.urandom(args.event_bytes)
    records = {"over": os.urandom(300), "audit": os.urandom(1200)}  # a hand's, about
    rooms = [f"bench-{i}" for i in range(args.rooms)]
    for room in rooms:
        await store.create_room(room, state, [], None)
    versions = dict.fromkeys(rooms, 1)
    times: list[float] = []
    for k in range(commits):
        room = rooms[k % len(rooms)]
        version = versions[room]
        events = [StoredEvent(version * 2 + i, payload) for i in range(2)]
        archive = Archive("g", {f"{version}:{n}": r for n, r in records.items()})
        started = time.perf_counter()
        ok = await store.commit(
            room,
            version,
            state,
            events,
            time.time() + 30,
            archive if k % args.archive_every == 0 else None,
        )
        times.append(time.perf_counter() - started)
        assert ok
        versions[room] = version + 1
    return sorted(times)


def report(name: str, times: list[float]) -> float:
    """Prints the figures of one way of committing; returns its mean in µs."""
    mean = statistics.fmean(times) * 1e6
    print(
        f"{name}_us_per_commit: {mean:.1f}  (p50 {percentile(times, 0.5) * 1e6:.1f}, "
        f"p99 {percentile(times, 0.99) * 1e6:.1f}, p99.9 {percentile(times, 0.999) * 1e6:.1f}, "
        f"max {times[-1] * 1e6:.0f}; {len(times)} commits)"
    )
    return mean


async def run(args: argparse.Namespace, folder: Path) -> None:
    print(machine_speed_line(machine_speed()))
    print(
        f"rooms: {args.rooms}  state: {args.state_bytes} B  events/commit: 2 x {args.event_bytes} B"
        f"  archive every {args.archive_every} commits  journal in {folder}"
    )
    await commit_times(MemoryRoomStore(), args.commits // 4, args)  # warm up the allocator
    memory = report("memory", await commit_times(MemoryRoomStore(), args.commits, args))
    normal = open_room_store(folder / "normal")
    journal = report("journal_normal", await commit_times(normal, args.commits, args))
    await normal.close()
    full = open_room_store(folder / "full", synchronous="FULL")
    report("journal_full", await commit_times(full, args.full_commits, args))
    await full.close()
    size = sum(f.stat().st_size for f in (folder / "normal").iterdir())
    print(f"journal_bytes_per_room: {size / args.rooms:.0f}  (after {args.commits} commits)")
    started = time.perf_counter()
    reopened = open_room_store(folder / "normal")
    print(f"reopen_ms: {(time.perf_counter() - started) * 1000:.0f}  ({args.rooms} rooms)")
    await reopened.close()
    print(f"journal_us_per_commit: {journal - memory:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="a folder for the journals (default: a temp one)")
    parser.add_argument("--rooms", type=int, default=256)
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--full-commits", type=int, default=1_000)
    parser.add_argument("--state-bytes", type=int, default=1500)
    parser.add_argument("--event-bytes", type=int, default=120)
    parser.add_argument("--archive-every", type=int, default=52, help="a hand: 52 cards")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-journal-", dir=args.dir) as folder:
        asyncio.run(run(args, Path(folder)))


if __name__ == "__main__":
    main()
