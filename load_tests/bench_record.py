"""What one archived game costs the store of record in PostgreSQL, and how fast games go in.

    python -m load_tests.bench_record              # a private PostgreSQL (tests/support)
    python -m load_tests.bench_record --games 500
    python -m load_tests.bench_record --url postgresql+asyncpg://…/empty_db

Plays ``--games`` real games to 100 with the room machine (``load_tests/record_games.py``: four
humans, fresh random shuffle secrets every hand, rated), then archives them with their rating
changes from ``--writers`` concurrent tasks, and prints ``name: value`` lines:

- ``archive_bytes_per_game``: ``pg_total_relation_size`` (table, TOAST and indexes) summed over
  the store's tables after a VACUUM, less the same sum for the empty schema, divided by the games;
- ``archive_games_per_second``: games archived per second of wall time (one node's tasks);
- ``hands_per_game`` and ``hand_record_bytes`` (the game's encoded hand records alone), to read
  the first figure by;
- ``table_bytes_per_game``: the first figure per table (heap and TOAST, then each index), to see
  where the bytes go.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg
import sqlalchemy as sa

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.record_games import played_game
from server.record.hand_codec import encode_hands
from server.record.migrate import migrate
from server.record.records import GameRecord, RatingChange
from server.record.schema import metadata
from server.record.store import ArchiveResult, RecordStore
from tests.support.postgres import LocalPostgres


@contextmanager
def private_postgres() -> Iterator[LocalPostgres]:
    server = LocalPostgres()
    try:
        server.start()
        yield server
    finally:
        server.stop()


async def _sizes(store: RecordStore) -> dict[str, int]:
    """Bytes per relation: each table (heap, TOAST, free space and visibility maps) and each
    of its indexes; their sum is ``pg_total_relation_size`` summed over the tables."""
    sizes: dict[str, int] = {}
    async with store.engine.connect() as connection:
        for table in metadata.tables:
            sizes[table] = int(
                await connection.scalar(sa.text(f"SELECT pg_table_size('{table}')")) or 0
            )
            indexes = await connection.execute(
                sa.text(
                    "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) "
                    f"FROM pg_index WHERE indrelid = '{table}'::regclass"
                )
            )
            for name, size in indexes:
                sizes[f"{table}.{name}"] = int(size)
    return sizes


async def _vacuum(url: str) -> None:
    dsn = url.replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("VACUUM ANALYZE")  # settle the free space map and visibility map
    finally:
        await connection.close()


async def measure(url: str, count: int, writers: int, seed: int) -> None:
    rng = random.Random(seed)
    games: list[tuple[GameRecord, list[RatingChange]]] = []
    now = 1.7e9
    for _ in range(count):
        players = [f"{rng.getrandbits(64):016x}" for _ in range(4)]  # fresh ids, like guests'
        record, changes = played_game(rng, f"{rng.getrandbits(72):018x}", players, now)
        games.append((record, changes))
        now = record.finished_at + rng.uniform(0, 5)
    await migrate(url)
    store = RecordStore.open(url)
    try:
        await _vacuum(url)
        empty = await _sizes(store)
        queue = list(games)

        async def writer() -> None:
            while queue:
                record, changes = queue.pop()
                result = await store.archive_game(record, changes)
                assert result is ArchiveResult.ARCHIVED, result

        started = time.perf_counter()
        await asyncio.gather(*(writer() for _ in range(writers)))
        elapsed = time.perf_counter() - started
        await _vacuum(url)
        full = await _sizes(store)
    finally:
        await store.close()
    hands = sum(len(record.hands) for record, _ in games)
    encoded = sum(len(encode_hands([(h.over, h.audit) for h in r.hands])) for r, _ in games)
    print(f"games: {count}")
    print(f"hands_per_game: {hands / count:.1f}")
    print(f"hand_record_bytes: {encoded / count:.0f}")
    print(f"archive_bytes_per_game: {(sum(full.values()) - sum(empty.values())) / count:.0f}")
    print(f"archive_games_per_second: {count / elapsed:.0f}")
    for name in sorted(full, key=lambda n: empty.get(n, 0) - full[n]):
        if full[name] != empty.get(name, 0):
            print(f"table_bytes_per_game {name}: {(full[name] - empty.get(name, 0)) / count:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--url", help="an empty PostgreSQL database (default: a private server)")
    args = parser.parse_args()
    if args.games < 1 or args.writers < 1:
        raise SystemExit("--games and --writers must be at least 1")
    print(machine_speed_line(machine_speed()))
    if args.url:
        asyncio.run(measure(args.url, args.games, args.writers, args.seed))
        return
    with private_postgres() as server:
        asyncio.run(measure(server.url(), args.games, args.writers, args.seed))


if __name__ == "__main__":
    main()
