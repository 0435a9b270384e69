"""What a finished game's page and a player's history cost a node, with 100,000 games kept.

    nice .venv/bin/python -m load_tests.bench_game_pages                 # a private PostgreSQL
    nice .venv/bin/python -m load_tests.bench_game_pages --games 20000 --requests 500

1. Plays ``--played`` real games to 100 with the room machine (``load_tests/record_games.py``:
   four humans, fresh shuffle secrets every hand, random legal cards, rated).
2. Keeps ``--games`` games in a fresh store of record on a private PostgreSQL
   (``tests/support/postgres.py``): each a played game under a new id, room, finish time (in
   order, over a year) and players (from a pool of ``--pool``; some seats bots), its rows made
   by the functions ``archive_game`` writes with (``server/record/games.py`` ``game_row`` and
   ``seat_rows``: the same columns, the same hand encoding, the same bytes a game), inserted in
   batches; one player, ``--player-games`` of them, with a rating history point each. The hands
   are the played game's, whose audits name the game they were played as: the rows' sizes and
   the work of decoding them are real; only that name is not the row's id.
3. Starts the real app (``create_app``: a node on the embedded room store and this database)
   and times requests through it in-process (httpx's ASGI transport: routing, the security
   headers, the handler, the database, decoding, JSON, the body read), one at a time:
   ``GET /api/games/ID`` for ``--requests`` games picked at random, then the player's whole
   history, 50 games a page by the pages' own cursors, ``--walks`` times, and the player's
   1,000-point rating history.

Prints ``name: value`` lines: ``machine_rules_hands_per_second``, ``games_kept``,
``insert_games_per_second``, ``game_page_ms_p50``/``_p99``/``_max``, ``game_page_bytes_mean``,
``player_games_page_ms_p50``/``_p99``/``_max``, ``player_ratings_ms_p99``. The issue's aims:
``game_page_ms_p99`` ≤ 20 and ``player_games_page_ms_p99`` ≤ 20.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import random
import secrets
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import asyncpg
import httpx
import sqlalchemy as sa

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.record_games import played_game
from server.app import Node, create_app
from server.config import Settings
from server.record.games import encoded_hands, game_row, seat_rows
from server.record.migrate import migrate
from server.record.records import GameRecord
from server.record.schema import game_seats, games, rating_history
from server.record.store import RecordStore
from tests.support.postgres import LocalPostgres

BATCH = 500  # games an INSERT carries
PLAYER = "bench-player-0000"
PAGE = 50


@contextmanager
def private_postgres() -> Iterator[LocalPostgres]:
    server = LocalPostgres()
    try:
        server.start()
        yield server
    finally:
        server.stop()


def played_games(count: int, seed: int) -> list[tuple[GameRecord, bytes]]:
    rng = random.Random(seed)
    played = []
    for n in range(count):
        players = [f"t{n}-{k}" for k in range(4)]
        record, _ = played_game(rng, f"{rng.getrandbits(64):016x}", players, 1.7e9)
        played.append((record, encoded_hands(record)))
    return played


def kept_game(
    rng: random.Random, template: GameRecord, finished_at: float, people: list[str | None]
) -> GameRecord:
    """``template`` under a new id, room, time and seats (None: a bot of a random level)."""
    room = secrets.token_urlsafe(9)
    seats = tuple(
        dataclasses.replace(seat, participant=p, name=f"Name {p[-6:]}", bot=None)
        if p is not None
        else dataclasses.replace(
            seat,
            participant=None,
            name=f"Bot {seat.seat}",
            bot=rng.choice(("basic", "normal", "strong")),
            rating_before=None,
            rating_after=None,
        )
        for seat, p in zip(template.seats, people, strict=True)
    )
    return dataclasses.replace(
        template,
        game_id=f"{room}.{rng.randint(1, 3)}",
        room_id=room,
        started_at=finished_at - (template.finished_at - template.started_at),
        finished_at=finished_at,
        seats=seats,
    )


async def keep(url: str, args: argparse.Namespace) -> tuple[list[str], float]:
    """Insert the games; their ids and the insert's wall time."""
    rng = random.Random(args.seed)
    played = played_games(args.played, args.seed)
    pool = [f"p{rng.getrandbits(48):012x}" for _ in range(args.pool)]
    mine = set(rng.sample(range(args.games), args.player_games))
    start, step = 1.70e9, 365 * 86400 / args.games
    ids: list[str] = []
    store = RecordStore.open(url)
    began = time.perf_counter()
    try:
        for first in range(0, args.games, BATCH):
            rows: list[dict[str, Any]] = []
            seats: list[dict[str, Any]] = []
            points: list[dict[str, Any]] = []
            for n in range(first, min(first + BATCH, args.games)):
                record, encoded = played[n % len(played)]
                people: list[str | None] = list(rng.sample(pool, 4))
                if n % 10 == 0:
                    for k in rng.sample(range(4), rng.randint(1, 3)):
                        people[k] = None
                if n in mine:
                    people[rng.randrange(4)] = PLAYER
                finished = start + n * step + rng.uniform(0, step / 2)
                game = kept_game(rng, record, finished, people)
                ids.append(game.game_id)
                rows.append(game_row(game, encoded))
                seats.extend(seat_rows(game))
                if n in mine:
                    points.append(history_point(game, len(points) + 1))
            async with store.engine.begin() as connection:
                await connection.execute(sa.insert(games), rows)
                await connection.execute(sa.insert(game_seats), seats)
                if points:
                    await connection.execute(sa.insert(rating_history), points)
    finally:
        await store.close()
    return ids, time.perf_counter() - began


def history_point(game: GameRecord, played: int) -> dict[str, Any]:
    """The player's rating history row for ``game``, as ``ratings.post_changes`` writes one."""
    seat = next(s for s in game.seats if s.participant == PLAYER)
    return {
        "player_id": PLAYER, "game_id": game.game_id, "at": game.finished_at,
        "mu_before": 25.0, "sigma_before": 8.0, "mu_after": 25.5, "sigma_after": 7.9,
        "display": seat.rating_after or 1500, "games": played,
    }  # fmt: skip


async def vacuum(dsn: str) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("VACUUM ANALYZE")
    finally:
        await connection.close()


def ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def timed(http: httpx.AsyncClient, path: str, samples: list[float]) -> httpx.Response:
    began = time.perf_counter()
    answer = await http.get(path)
    samples.append(time.perf_counter() - began)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:200])
    return answer


async def measure(url: str, ids: list[str], args: argparse.Namespace) -> dict[str, float]:
    os.environ["HEARTS_DATA_DIR"] = tempfile.mkdtemp(prefix="hearts-bench-pages-")
    settings = Settings(database_url=url, bot_workers=0, matchmaker=False, log_level="WARNING")
    app = create_app(settings)
    node: Node = app.state.node
    await node.start()
    rng = random.Random(args.seed + 1)
    figures: dict[str, float] = {}
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            warm: list[float] = []
            for game_id in rng.sample(ids, 100):
                await timed(http, f"/api/games/{game_id}", warm)
            pages: list[float] = []
            sizes = []
            for game_id in rng.sample(ids, args.requests):
                sizes.append(len((await timed(http, f"/api/games/{game_id}", pages)).content))
            lists: list[float] = []
            for _ in range(args.walks):
                token, seen = None, 0
                while True:
                    query = f"?limit={PAGE}" + (f"&before={token}" if token else "")
                    body = (await timed(http, f"/api/players/{PLAYER}/games{query}", lists)).json()
                    seen += len(body["games"])
                    token = body["next"]
                    if token is None:
                        break
                assert seen == args.player_games, seen
            plots: list[float] = []
            for _ in range(50):
                await timed(http, f"/api/players/{PLAYER}/ratings", plots)
    finally:
        await node.stop()
    figures.update(
        game_page_ms_p50=ms(pages, 0.5), game_page_ms_p99=ms(pages, 0.99),
        game_page_ms_max=ms(pages, 1.0), game_page_bytes_mean=statistics.mean(sizes),
        player_games_page_ms_p50=ms(lists, 0.5), player_games_page_ms_p99=ms(lists, 0.99),
        player_games_page_ms_max=ms(lists, 1.0), player_games_pages=len(lists),
        player_ratings_ms_p99=ms(plots, 0.99),
    )  # fmt: skip
    return figures


async def run(server: LocalPostgres, args: argparse.Namespace) -> None:
    url = server.url()
    await migrate(url)
    ids, seconds = await keep(url, args)
    await vacuum(server.dsn())
    print(f"games_kept: {len(ids)}")
    print(f"player_games: {args.player_games}")
    print(f"insert_games_per_second: {len(ids) / seconds:.0f}")
    for name, value in (await measure(url, ids, args)).items():
        print(f"{name}: {value:.0f}" if name.endswith(("bytes_mean", "pages")) else
              f"{name}: {value:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--player-games", type=int, default=5_000)
    parser.add_argument("--played", type=int, default=300, help="real games played to copy")
    parser.add_argument("--pool", type=int, default=20_000, help="players the games seat")
    parser.add_argument("--requests", type=int, default=2_000, help="game pages timed")
    parser.add_argument("--walks", type=int, default=5, help="walks through the history")
    parser.add_argument("--seed", type=int, default=53)
    args = parser.parse_args()
    if not 0 < args.player_games <= args.games or min(args.played, args.requests) < 1:
        raise SystemExit("need 0 < --player-games <= --games, and --played, --requests >= 1")
    if args.pool < 4 or args.requests + 100 > args.games:
        raise SystemExit("--pool must be at least 4 and --games above --requests + 100")
    print(machine_speed_line(machine_speed()))
    with private_postgres() as server:
        asyncio.run(run(server, args))


if __name__ == "__main__":
    main()
