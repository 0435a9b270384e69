"""What the operating system and Redis say about a run, and how the generator summarises it.

Node memory and CPU come from /proc (a node and its descendants); Redis' work from INFO
(``commandstats`` per command, ``total_reads_processed`` for round trips: a pipeline or a
MULTI block the server reads at once counts once). Shared by ``load_tests.load`` and
``load_tests.paced``.
"""

from __future__ import annotations

import contextlib
import math
import os
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import redis
from prometheus_client.parser import text_string_to_metric_families

from server.core.room.state import RoomState
from server.ops.loop_lag import LoopLag as TimerLag


def descendants(pid: int) -> list[int]:
    """The process and its children, grandchildren… (bot workers, if any) from /proc."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
    return found


def rss_kib(pids: list[int]) -> int:
    """VmRSS of these processes and their descendants, from /proc/PID/status."""
    total = 0
    for pid in (p for root in pids for p in descendants(root)):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    break
    return total


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes and their descendants, from /proc/PID/stat."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in (p for root in pids for p in descendants(root)):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as f:
            # Fields after the parenthesised command name; utime and stime are 14 and 15.
            fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


@dataclass
class RedisSnapshot:
    total_commands: int
    per_command: dict[str, int]
    used_memory: int
    total_reads: int  # read events: round trips, a pipeline read at once counting once
    own_calls: int  # what this probe had sent by then (this INFO included), to net it out
    own_reads: int
    own_per_command: dict[str, int]


@dataclass(frozen=True)
class RedisDelta:
    """What others asked of Redis between two snapshots: the probe's own calls taken out."""

    commands: int
    round_trips: int
    per_command: Counter[str]


class RedisProbe:
    """INFO before and after; its own calls are counted and taken out of the deltas."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url, socket_timeout=5)
        self.client.ping()  # connect (and any client hand-shake) before the first snapshot
        self.own_calls = 0
        self.own_reads = 0
        self.own_per_command: Counter[str] = Counter()

    def _own(self, command: str, calls: int = 1, reads: int = 1) -> None:
        self.own_calls += calls
        self.own_reads += reads
        self.own_per_command[command] += calls

    def forks(self) -> int:
        """How many times Redis has forked (an AOF rewrite or a snapshot) since it started."""
        info = self.client.info("stats")
        self._own("info")
        return int(info["total_forks"])

    def snapshot(self) -> RedisSnapshot:
        info = self.client.info("all")
        self._own("info")
        per_command = {
            key.removeprefix("cmdstat_"): int(value["calls"])
            for key, value in info.items()
            if key.startswith("cmdstat_") and isinstance(value, dict)
        }
        return RedisSnapshot(
            int(info["total_commands_processed"]),
            per_command,
            int(info["used_memory"]),
            int(info.get("total_reads_processed", 0)),
            self.own_calls,
            self.own_reads,
            dict(self.own_per_command),
        )

    @staticmethod
    def delta(before: RedisSnapshot, after: RedisSnapshot) -> RedisDelta:
        """INFO counts the commands before it but its own read, so a delta between two
        snapshots holds exactly one of the two INFOs in each count: the own-call deltas."""
        per_command: Counter[str] = Counter()
        for name, calls in after.per_command.items():
            own = after.own_per_command.get(name, 0) - before.own_per_command.get(name, 0)
            net = calls - before.per_command.get(name, 0) - own
            if net > 0:
                per_command[name] = net
        return RedisDelta(
            after.total_commands - before.total_commands - (after.own_calls - before.own_calls),
            after.total_reads - before.total_reads - (after.own_reads - before.own_reads),
            per_command,
        )

    def largest_hash_field(self, pattern: str, field: str, batch: int = 100) -> tuple[int, int]:
        """(keys matching ``pattern``, the largest HSTRLEN of ``field`` among them).

        SCAN, then HSTRLEN in pipelines small enough to reach Redis in one read each, so the
        probe's round trips are known exactly and netted out of the run's."""
        keys = largest = 0
        for found in self._scan(pattern):
            for start in range(0, len(found), batch):
                chunk = found[start : start + batch]
                pipe = self.client.pipeline(transaction=False)
                for key in chunk:
                    pipe.hstrlen(key, field)
                sizes = pipe.execute()
                self._own("hstrlen", calls=len(chunk))
                keys += len(chunk)
                largest = max([largest, *(int(n) for n in sizes)])
        return keys, largest

    def _scan(self, pattern: str) -> Iterator[list[bytes | str]]:
        """The keys matching ``pattern``, one SCAN reply at a time (each counted as the
        probe's own)."""
        cursor = 0
        while True:
            cursor, found = self.client.scan(cursor, match=pattern, count=1000)
            self._own("scan")
            yield found
            if cursor == 0:
                return

    def unarchived(self, pattern: str, batch: int = 100) -> tuple[int, int]:
        """(rooms matching ``pattern`` whose outbox holds finished games not yet in the store of
        record, those games): each room's state (field ``s``) read and decoded."""
        rooms = games = 0
        for found in self._scan(pattern):
            for start in range(0, len(found), batch):
                chunk = found[start : start + batch]
                pipe = self.client.pipeline(transaction=False)
                for key in chunk:
                    pipe.hget(key, "s")
                states = pipe.execute()
                self._own("hget", calls=len(chunk))
                for raw in states:
                    if raw is None:
                        continue  # the room expired between the scan and the read
                    waiting = len(RoomState.from_bytes(raw).unarchived)
                    rooms += waiting > 0
                    games += waiting
        return rooms, games

    def latency_events(self) -> list[tuple[str, int, int]]:
        """Redis's own latency monitor (``LATENCY LATEST``): each kind of stall it noted (a
        fork, an AOF write or fsync, a slow command), its latest and its worst, in ms."""
        rows = self.client.latency_latest()
        self._own("latency|latest")
        return [
            (r[0].decode() if isinstance(r[0], bytes) else str(r[0]), int(r[2]), int(r[3]))
            for r in rows
        ]

    def redis_pid(self) -> int:
        self._own("info")
        return int(self.client.info("server")["process_id"])

    def close(self) -> None:
        self.client.close()


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest rank: the smallest value with at least this fraction of the values at or below."""
    if not sorted_values:
        return float("nan")
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


class LoopLag(TimerLag):
    """How late this process' event loop wakes up: the generator's own share of the latency."""

    def __init__(self, every: float = 0.05) -> None:
        self.samples: list[float] = []  # the owner takes them by replacing the list
        super().__init__(self._keep, every)

    def _keep(self, seconds: float) -> None:
        self.samples.append(seconds)  # the list now in place, not the one at start


LOOP_LAG_METRIC = "hearts_event_loop_lag_seconds"
GC_PAUSE_METRIC = "hearts_gc_pause_seconds"


def node_loop_lag(http_urls: list[str]) -> dict[float, float] | None:
    """The nodes' loop-lag histograms summed (``node_histogram``)."""
    return node_histogram(http_urls, LOOP_LAG_METRIC)


def node_gc_pauses(http_urls: list[str]) -> dict[float, float] | None:
    """The nodes' garbage-collection pause histograms summed (``node_histogram``)."""
    return node_histogram(http_urls, GC_PAUSE_METRIC)


def node_histogram(http_urls: list[str], metric: str) -> dict[float, float] | None:
    """A histogram of every node's /metrics summed: cumulative sample counts by bucket bound
    (s), or None if a node did not answer."""
    counts: dict[float, float] = {}
    for url in http_urls:
        try:
            with urllib.request.urlopen(f"{url}/metrics", timeout=2) as reply:
                text = reply.read().decode()
        except OSError:
            return None
        for family in text_string_to_metric_families(text):
            if family.name != metric:
                continue
            for sample in family.samples:
                if sample.name == metric + "_bucket":
                    bound = float(sample.labels["le"])
                    counts[bound] = counts.get(bound, 0.0) + sample.value
    return counts


def histogram_quantile(
    before: dict[float, float], after: dict[float, float], fraction: float
) -> float:
    """The ``fraction`` quantile (s) of the samples taken between two readings of a histogram,
    interpolated linearly inside the bucket that holds it, as Prometheus' ``histogram_quantile``
    does (the lowest bucket from 0): an estimate whose error is at most that bucket's width. In
    the top, unbounded bucket: the largest finite bound. NaN without samples."""
    delta = {b: after.get(b, 0.0) - before.get(b, 0.0) for b in after}
    total = delta.get(math.inf, 0.0)
    if total <= 0:
        return math.nan
    rank = fraction * total
    lower = below = 0.0  # the previous bound and the samples at or under it
    for bound in sorted(delta):
        count = delta[bound]
        if count >= rank and count > below:
            if math.isinf(bound):
                return lower
            return lower + (bound - lower) * (rank - below) / (count - below)
        lower, below = bound, count
    return lower


def lag_bound(before: dict[float, float], after: dict[float, float], fraction: float) -> float:
    """The smallest bucket bound (s) holding ``fraction`` of the samples taken between the two
    readings (inf when the top bucket is needed, nan without samples)."""
    delta = {b: after.get(b, 0.0) - before.get(b, 0.0) for b in after}
    total = delta.get(math.inf, 0.0)
    if total <= 0:
        return math.nan
    for bound in sorted(delta):
        if delta[bound] >= fraction * total:
            return bound
    return math.inf
