"""One Redis against a Redis Cluster, and what a failover loses.

    nice -n 19 python -m load_tests.bench_cluster             # throughput and latency
    nice -n 19 python -m load_tests.bench_cluster --failover  # acknowledged moves lost

Throughput: the ``bench_store`` workload (each worker loads a room and commits a room-sized
state with two events, a subscriber drains the fan-out) on a private redis-server, then on a
private cluster of 3 primaries and 3 replicas (``tests/support/redis_cluster.py``), then on the
cluster with ``WAIT 1`` after each commit; it prints commits per second and latency percentiles of
each, the added latency of WAIT per card (one card is one commit), and ends with
``cluster_commits_per_second: N``. Everything runs on this one machine, so the cluster shares
its cores with the client: the figures compare the code paths, not the capacity of three
servers.

Failover: writers commit as fast as they can to rooms whose slots one primary owns; the
primary is killed with SIGKILL; once its replica has taken over, each room's stored version is
compared with the highest version a commit had acknowledged. Asynchronous replication can lose
the last acknowledged commits; with ``WAIT`` it should lose none. Ends with
``failover_lost_acked_moves: N`` (without WAIT, summed over the trials).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from dataclasses import dataclass
from typing import Any

from load_tests.bench_store import percentile, private_redis, run
from server.store import StoredEvent
from server.store.redis.keys import RoomKeys, shard_of
from server.store.redis.rooms import RedisRoomStore
from tests.support.redis_cluster import LocalCluster


def workload(args: argparse.Namespace, backend: str) -> argparse.Namespace:
    return argparse.Namespace(
        backend=backend,
        rooms=args.rooms,
        concurrency=args.concurrency,
        commits=args.commits,
        state_bytes=1500,
        events=2,
        event_bytes=120,
        no_subscriber=False,
    )


async def measure(url: str, backend: str, args: argparse.Namespace, **options: Any) -> list[float]:
    store = RedisRoomStore(url, prefix=f"bench-{uuid.uuid4().hex[:8]}", **options)
    try:
        results = await run(store, workload(args, backend))
        print()
        return [results.commits / max(results.elapsed, 1e-9)] + [
            percentile(results.latencies, q) for q in (0.5, 0.99)
        ]
    finally:
        await store.close()


async def throughput(args: argparse.Namespace) -> None:
    """Rounds of one Redis, the cluster, the cluster with WAIT, interleaved so that the noise
    of a shared machine falls on all three alike; medians of the rounds."""
    runs: dict[str, list[list[float]]] = {"one redis": [], "cluster": [], "cluster+WAIT": []}
    with private_redis() as url:
        cluster = LocalCluster().start()
        try:
            for round_ in range(args.repeat):
                print(f"--- round {round_ + 1} of {args.repeat}")
                runs["one redis"].append(await measure(url, "one redis-server", args))
                runs["cluster"].append(
                    await measure(cluster.url, "cluster, 3 primaries + 3 replicas", args)
                )
                runs["cluster+WAIT"].append(
                    await measure(
                        cluster.url,
                        f"cluster with WAIT 1 {args.wait_ms} ms after each commit",
                        args,
                        wait_replicas=1,
                        wait_ms=args.wait_ms,
                    )
                )
        finally:
            cluster.stop()
    med = {
        name: [statistics.median(r[i] for r in rows) for i in range(3)]
        for name, rows in runs.items()
    }
    print(f"medians of {args.repeat} rounds:")
    for name, (rate, p50, p99) in med.items():
        print(
            f"{name:>13}: {rate:8.0f} commits/s  p50 {p50 * 1000:6.2f} ms  "
            f"p99 {p99 * 1000:6.2f} ms"
        )
    single, clustered, waited = med["one redis"], med["cluster"], med["cluster+WAIT"]
    print(f"wait_cost_ms_per_card_p50: {(waited[1] - clustered[1]) * 1000:.3f}")
    print(f"wait_commits_per_second: {round(waited[0])}")
    print(f"single_commits_per_second: {round(single[0])}")
    print(f"single_p99_commit_ms: {single[2] * 1000:.2f}")
    print(f"cluster_p99_commit_ms: {clustered[2] * 1000:.2f}")
    print(f"cluster_commits_per_second: {round(clustered[0])}")


@dataclass
class Trial:
    acked_commits: int
    lost: int
    rooms_losing: int
    failover_seconds: float


async def _writer(store: RedisRoomStore, room: str, acked: dict[str, int], stop: asyncio.Event,
                  payload: bytes) -> None:
    version = 1
    while not stop.is_set():
        try:
            ok = await store.commit(room, version, payload, [StoredEvent(version, payload)], None)
        except Exception:
            return  # the primary is gone: this writer's part is over
        if not ok:
            return
        acked[room] = version + 1  # acknowledged: the commit returned True
        version += 1


async def failover_trial(
    wait_replicas: int, wait_ms: int, rooms_count: int, lag: float
) -> Trial:
    """``lag`` > 0: the victim's replica is frozen (SIGSTOP) that long before the kill, as a
    replica behind a slow link or disk would be; it resumes right after the kill."""
    cluster = LocalCluster().start()
    try:
        prefix = f"bench-{uuid.uuid4().hex[:8]}"
        keys = RoomKeys(prefix)
        victim = cluster.owner_of_key(keys.tag(0))
        rooms: list[str] = []
        i = 0
        while len(rooms) < rooms_count:
            room = f"fo-{i}"
            if cluster.owner_of_key(keys.tag(shard_of(room))) == victim:
                rooms.append(room)
            i += 1
        store = RedisRoomStore(cluster.url, prefix=prefix, wait_replicas=wait_replicas,
                               wait_ms=wait_ms)
        try:
            for room in rooms:
                assert await store.create_room(room, b"", [], None)
            acked = {room: 1 for room in rooms}
            stop = asyncio.Event()
            payload = b"x" * 200
            tasks = [
                asyncio.create_task(_writer(store, room, acked, stop, payload)) for room in rooms
            ]
            await asyncio.sleep(1.5)  # full speed
            replica = cluster.replica_of(victim)
            if lag:
                cluster.freeze(replica)
                await asyncio.sleep(lag)
            cluster.kill(victim)
            killed = time.monotonic()
            if lag:
                cluster.thaw(replica)
            await asyncio.sleep(0.05)  # acks already on their way still count
            stop.set()
            snapshot = dict(acked)
            await asyncio.gather(*tasks, return_exceptions=True)
            cluster.wait_healthy(30)
            failover = time.monotonic() - killed
            lost = rooms_losing = 0
            for room in rooms:
                for _ in range(50):
                    try:
                        snap = await store.load_room(room)
                        break
                    except Exception:
                        await asyncio.sleep(0.1)
                assert snap is not None
                missing = max(0, snapshot[room] - snap.version)
                lost += missing
                rooms_losing += missing > 0
            return Trial(sum(v - 1 for v in snapshot.values()), lost, rooms_losing, failover)
        finally:
            await store.close()
    finally:
        cluster.stop()


async def failovers(args: argparse.Namespace) -> None:
    totals: dict[tuple[int, float], int] = {}
    for lag in (0.0, args.lag):
        for wait_replicas in (0, 1):
            label = "no WAIT" if not wait_replicas else f"WAIT 1 {args.wait_ms} ms"
            label += f", replica frozen {lag:.1f} s before the kill" if lag else ", replica live"
            lost = 0
            for trial in range(args.trials):
                t = await failover_trial(wait_replicas, args.wait_ms, args.failover_rooms, lag)
                lost += t.lost
                print(
                    f"{label}, trial {trial + 1}: acknowledged commits {t.acked_commits}, "
                    f"lost {t.lost} (in {t.rooms_losing} of {args.failover_rooms} rooms), "
                    f"cluster ok again {t.failover_seconds:.1f} s after the kill"
                )
            totals[wait_replicas, lag] = lost
    print(f"failover_lost_acked_moves_lagging_replica: {totals[0, args.lag]}")
    print(f"failover_lost_acked_moves_lagging_replica_with_wait: {totals[1, args.lag]}")
    print(f"failover_lost_acked_moves_with_wait: {totals[1, 0.0]}")
    print(f"failover_lost_acked_moves: {totals[0, 0.0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--failover", action="store_true", help="measure failover losses")
    parser.add_argument("--rooms", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--commits", type=int, default=4000, help="measured commits per run")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the three runs")
    parser.add_argument("--wait-ms", type=int, default=50)
    parser.add_argument("--trials", type=int, default=3, help="failovers of each kind")
    parser.add_argument("--failover-rooms", type=int, default=32)
    parser.add_argument("--lag", type=float, default=1.0, help="seconds the replica is frozen")
    args = parser.parse_args()
    asyncio.run(failovers(args) if args.failover else throughput(args))


if __name__ == "__main__":
    main()
