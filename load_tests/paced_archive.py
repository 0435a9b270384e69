"""The store of record under paced load: how long a finished game waits for its row.

A game that ends is listed in its room's outbox by the commit that ends it; a node's tick hands
it to the store of record and observes ``hearts_archive_lag_seconds`` (``server/ops/metrics.py``),
the time from that commit to the game's row, when the row is written
(``server/league/archiving.py``). The paced run reads that histogram from every node's
``/metrics`` and sums it over the nodes: before the first table and at the end of the run (each
ramp step's window too), after the generators have stopped and the rooms' outboxes have emptied
(or ``OUTBOX_WAIT`` s have passed), so no game that ended in the run is left out for being slow.
The report's lines:

- ``archive_lag_ms_p99``: the 99th percentile of the run's lags, **bucket-interpolated** (linear
  inside the histogram's bucket that holds it, as Prometheus' ``histogram_quantile``; the
  buckets are 0.5 s wide around the 2 s aim), with the p50 and the bucket of the slowest beside;
- ``archived_games``: the games the nodes wrote to the store of record in the run (the
  histogram's count);
- ``archived_games_in_database``: the rows of ``games`` in the store of record at the end (where
  the run started the nodes, on a fresh database: equal to the line above when nothing is lost);
- ``archive_outbox_rooms``: the rooms whose outbox still held a finished game at the end.

Games end only well into a run: one to 50 at human speed (``--think 1``) takes about seven
minutes (five hands of 52 cards at 1.3 s each), so a run measures the archive only if it is
long enough for hundreds of games to end (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
import sqlalchemy as sa

from load_tests.measures import RedisProbe, histogram_quantile, lag_bound, node_histogram
from server.record.engine import make_engine
from server.record.schema import games

ARCHIVE_LAG_METRIC = "hearts_archive_lag_seconds"
OUTBOX_WAIT = 30.0  # s at most the end waits for the outboxes to empty
OUTBOX_POLL = 1.0


def archive_lag(node_urls: list[str]) -> dict[float, float] | None:
    """Every node's archive-lag histogram summed (cumulative counts by bucket bound, s)."""
    return node_histogram(node_urls, ARCHIVE_LAG_METRIC)


def lag_summary(before: dict[float, float] | None, after: dict[float, float] | None) -> str:
    """Short, for a ramp step: the p99 of the lags observed between two readings."""
    if after is None:
        return "-"
    count = after.get(math.inf, 0.0) - (before or {}).get(math.inf, 0.0)
    if count <= 0:
        return "- (no game)"
    return f"{histogram_quantile(before or {}, after, 0.99) * 1000:.0f} ms ({count:.0f} games)"


async def _count_games(url: str) -> int:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return int(await connection.scalar(sa.select(sa.func.count()).select_from(games)) or 0)
    finally:
        await engine.dispose()


def games_in_database(url: str) -> int | None:
    """Rows of ``games`` in the store of record at ``url``; None if it cannot be read."""
    try:
        return asyncio.run(_count_games(url))
    except Exception:  # no schema yet (no node started), or the database is gone
        return None


@dataclass
class ArchiveEnd:
    """What the end of a run found; None where it was not measured."""

    before: dict[float, float] | None  # the nodes' histogram before the first table
    after: dict[float, float] | None  # ... and at the end
    outbox: tuple[int, int] | None  # rooms, and their finished games, not yet archived
    waited: float  # s the end waited for the outboxes
    in_database: int | None
    database: str  # what the store of record is, for the report


def read_end(
    probe: RedisProbe | None,
    pattern: str,
    node_urls: list[str],
    before: dict[float, float] | None,
    database: tuple[str, str] | None,
    stop: Callable[[], bool],
) -> ArchiveEnd:
    """After the generators stopped: wait (while ``stop()`` is false, up to ``OUTBOX_WAIT`` s)
    for the rooms of ``pattern`` to hand every finished game on, then read the nodes'
    histograms and count the rows of the store of record (``database``: its URL and what to
    call it), where known."""
    outbox: tuple[int, int] | None = None
    started = time.monotonic()
    try:
        while probe is not None:
            outbox = probe.unarchived(pattern)
            if not outbox[0] or time.monotonic() - started >= OUTBOX_WAIT or stop():
                break
            time.sleep(OUTBOX_POLL)
    except redis.RedisError:
        outbox = None
    waited = time.monotonic() - started
    in_database = games_in_database(database[0]) if database is not None else None
    return ArchiveEnd(
        before, archive_lag(node_urls), outbox, waited, in_database, database[1] if database else ""
    )


def archive_lines(end: ArchiveEnd) -> list[str]:
    out: list[str] = []
    say = out.append
    where = f"its row in {end.database}" if end.database else "its row in the store of record"
    if end.before is None or end.after is None:
        say("archive_lag_ms_p99: not measured  (a node's /metrics did not answer)")
        say("archived_games: not measured")
    else:
        count = end.after.get(math.inf, 0.0) - end.before.get(math.inf, 0.0)
        if count <= 0:
            say(
                "archive_lag_ms_p99: none measured  (no game ended and was archived in the run: "
                "a game to 50 takes minutes at --think 1)"
            )
        else:
            p50, p99 = (histogram_quantile(end.before, end.after, f) for f in (0.5, 0.99))
            top = lag_bound(end.before, end.after, 1.0)
            say(
                f"archive_lag_ms_p99: {p99 * 1000:.0f}  (bucket-interpolated from the nodes' "
                f"hearts_archive_lag_seconds summed: from a game's last commit to {where}; "
                f"p50 {p50 * 1000:.0f}, the slowest ≤ {top * 1000:g}; {count:.0f} games)"
            )
        say(f"archived_games: {count:.0f}  (written by the nodes in the run)")
    if end.in_database is None:
        say("archived_games_in_database: not measured  (nodes started here only)")
    else:
        say(f"archived_games_in_database: {end.in_database}  (rows of games in {end.database})")
    if end.outbox is None:
        say("archive_outbox_rooms: not measured  (pass --redis-url)")
    else:
        rooms, waiting = end.outbox
        say(
            f"archive_outbox_rooms: {rooms}  (rooms holding {waiting} finished games not yet "
            f"archived, at the end, after waiting {end.waited:.0f} s for them)"
        )
    return out
