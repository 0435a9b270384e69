"""The store of record end to end, under faults: nothing finished is forgotten.

Real server processes (``python -m server``) with ``HEARTS_DATABASE_URL`` on a fresh database
of the session's private PostgreSQL, and a private Redis that a test may kill and start again
empty. Games are rated quick-play games to 50 (bots fill the empty seats after ``FILL_AFTER``),
played by scripted clients at a human's pace or faster; each test takes well under a minute.

- Redis killed and started empty: accounts, ratings, histories and finished games stay.
- The only archiver killed with SIGKILL in the middle of a drain, at three kill points made
  certain rather than timed: every game is kept exactly once, every rating posted once.
- PostgreSQL stopped during play: no move waits for it, and the games that end meanwhile land
  once it is back; the outage is logged once when it starts and once when it ends. The same
  with a database that hangs instead of refusing: the archive waits off the room's actor.

(A node restarted on its embedded SQLite file is ``test_e2e_embedded_restart.py`` and
``test_e2e_accounts_restart.py``.)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import redis
import sqlalchemy as sa

from protocol.account_api import guest, login, sign_up
from protocol.client import HeartsClient
from protocol.verify import verify_audit
from server.league.archiving import ATTEMPT_SECONDS
from server.record.migrate import migrate
from server.record.records import GameRecord
from server.record.schema import games, rating_history, ratings
from server.record.store import RecordStore
from tests.conftest import _start_redis
from tests.e2e.test_e2e_quickplay import queue_and_play
from tests.support.client_bots import new_player, play_to_the_end
from tests.support.postgres import LocalPostgres
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

# Every test runs on a new, empty database of the session's private PostgreSQL (conftest's
# ``record_url``, its PostgreSQL kind only).
on_postgres = pytest.mark.parametrize("record_url", ["postgres"], indirect=True)

FILL_AFTER = "0.5"  # quick play seats whoever waited this long (seconds), with bots
COMMANDS_PER_SECOND = 30  # a paced client's rate, under the protocol's limit (50 a second)

# How long PostgreSQL stays down in the outage test. 30 s is the figure, for a manual
# run (HEARTS_TEST_DB_OUTAGE=30). The suite uses 8 s: long enough for several of the archive's
# node-wide probes (one per ``PROBE_EVERY``, 2 s) to fail and for the waiting room to be retried
# (every ``ARCHIVE_RETRY``, 2 s) several times, with three or more games ending in the outage;
# a longer outage only repeats those, and would cost the suite its length again in play.
DB_OUTAGE_SECONDS = float(os.environ.get("HEARTS_TEST_DB_OUTAGE", "8"))
MAX_MOVE_SECONDS = 0.5  # a command answered later than this while the database is out: a stall
ARCHIVER = "the store of record (finished games wait in their rooms)"  # its OutageLog's name


# -- the test's own servers ---------------------------------------------------------------------


class ScratchRedis:
    """A private redis-server (conftest's ``_start_redis``: no snapshot, no AOF) that a test may
    kill, freeze, and start again empty on the same port."""

    def __init__(self) -> None:
        self.process, self.port, self.workdir = _start_redis()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def start_empty(self) -> None:
        """The first command line again: the same port, nothing to load."""
        with Path(self.workdir, "restarted.log").open("ab") as log:
            self.process = subprocess.Popen(self.process.args, stdout=log, stderr=log)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5, socket_timeout=2)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    if client.ping():
                        break
                except redis.RedisError:
                    if time.monotonic() > deadline or self.process.poll() is not None:
                        raise
                    time.sleep(0.05)
            # The nodes reconnect at once and write their heartbeats; nothing of before is here.
            kept = [k for k in client.scan_iter(count=1000) if b":room:" in k]
            assert not kept, f"the restarted Redis kept rooms: {kept[:3]}"
        finally:
            client.close()

    def freeze(self) -> None:
        """SIGSTOP: alive, its sockets open, silent."""
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def close(self) -> None:
        self.thaw()
        self.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)


@pytest.fixture
def scratch_redis() -> Iterator[ScratchRedis]:
    server = ScratchRedis()
    try:
        yield server
    finally:
        server.close()


class Database:
    """The test's own connection to the nodes' database: to watch it, and to lock a table."""

    def __init__(self, postgres: LocalPostgres, url: str) -> None:
        self.dsn = postgres.dsn(sa.make_url(url).database or "postgres")
        self.connection: asyncpg.Connection | None = None
        self.lock: Any = None  # the open transaction holding the lock

    async def _connected(self) -> asyncpg.Connection:
        if self.connection is None or self.connection.is_closed():
            self.connection = await asyncpg.connect(self.dsn)
        return self.connection

    async def hold_rating_history(self) -> None:
        """Lock ``rating_history`` against writes (reads go on): an archive's transaction then
        writes the game, its seats and the ratings, and waits at its last statement, the
        history's rows, until ``release``."""
        connection = await self._connected()
        self.lock = connection.transaction()
        await self.lock.start()
        await connection.execute("LOCK TABLE rating_history IN SHARE MODE")

    async def release(self) -> None:
        if self.lock is not None:
            await self.lock.rollback()
            self.lock = None

    async def waiting_for_a_lock(self) -> bool:
        connection = await self._connected()
        waiting = await connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return int(waiting) > 0

    async def games_kept(self) -> int:
        connection = await self._connected()
        return int(await connection.fetchval("SELECT count(*) FROM games"))

    async def any_game_kept(self) -> bool:
        return await self.games_kept() > 0

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()


def node(redis_url: str, database_url: str) -> ServerProcess:
    return ServerProcess(
        redis_url=redis_url, HEARTS_DATABASE_URL=database_url, HEARTS_BOT_FILL_AFTER=FILL_AFTER
    ).start()


def quiet_log(server: ServerProcess) -> str:
    """The node's log, which holds nothing worse than a warning."""
    log = server.log()
    assert '"level": "ERROR"' not in log and '"level": "CRITICAL"' not in log, log[-3000:]
    return log


async def wait_for(check: Callable[[], Awaitable[bool]], what: str, timeout: float) -> None:
    """Poll ``check`` every 5 ms until it is true (bounded)."""
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        await asyncio.sleep(0.005)


# -- players --------------------------------------------------------------------------------


class PacedMoves:
    """From now on the client sends at most ``COMMANDS_PER_SECOND`` commands a second (its
    fair-deal commits and reveals included), and each one is timed. While ``strict``, a command
    answered later than ``MAX_MOVE_SECONDS`` fails the test at once (AssertionError)."""

    def __init__(self, client: HeartsClient) -> None:
        self.timings: list[tuple[float, float, str]] = []  # (sent at, seconds taken, kind)
        self.strict = False
        self._request = client.request
        self._last = 0.0
        client.request = self._timed  # type: ignore[method-assign]

    async def _timed(self, kind: str, timeout: float = 30.0, **fields: Any) -> dict[str, Any]:
        await asyncio.sleep(max(0.0, self._last + 1 / COMMANDS_PER_SECOND - time.monotonic()))
        sent = self._last = time.monotonic()
        strict = self.strict
        try:
            return await self._request(kind, timeout, **fields)
        finally:
            took = time.monotonic() - sent
            self.timings.append((sent, took, kind))
            if strict and took >= MAX_MOVE_SECONDS:
                raise AssertionError(f"{kind} answered in {took:.2f} s: play stalled")

    def during(self, start: float, end: float) -> list[tuple[float, float, str]]:
        """The commands sent from ``start`` to ``end``, slowest first."""
        return sorted((t for t in self.timings if start <= t[0] < end), key=lambda t: -t[1])


async def connect(server: ServerProcess, identity: dict[str, Any]) -> HeartsClient:
    client = await HeartsClient.connect(server.ws, identity["token"])
    client.identity = identity  # type: ignore[attr-defined]
    return client


def player_of(client: HeartsClient) -> str:
    return str(client.identity["player"])  # type: ignore[attr-defined]


def game_of(client: HeartsClient) -> str:
    """The game quick play last seated the client in (its ``matched`` view names it)."""
    matched = [f for f in client.frames if f.get("type") == "matched"]
    assert matched, "never seated"
    return str(matched[-1]["view"]["game_id"])


def games_seen(client: HeartsClient) -> list[str]:
    """The game the client was seated in, then every game it saw start there, in order."""
    ids = [game_of(client)]
    for frame in client.frames:
        if frame.get("event") == "game_started" and frame["game"] not in ids:
            ids.append(frame["game"])
    return ids


async def quick_play(clients: list[HeartsClient]) -> list[tuple[str, dict[str, Any]]]:
    """Every client queues for quick play at once and plays its rated game (bots in the seats
    nobody took) to its end: each one's game id and ``game_over``."""
    results = await asyncio.gather(*(queue_and_play(c, k) for k, c in enumerate(clients)))
    return [(game_of(c), over) for c, over in zip(clients, results, strict=True)]


# -- what the store of record holds ---------------------------------------------------------


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


async def player_page(server: ServerProcess, player: str) -> dict[str, Any]:
    return dict(await asyncio.to_thread(get_json, f"{server.base}/api/players/{player}"))


async def wait_on_page(
    server: ServerProcess, player: str, game_id: str, games: int, timeout: float = 30
) -> dict[str, Any]:
    """The player's page (``GET /api/players/ID``) once it shows the rated game ``game_id`` in
    their recent games and their history, and ``games`` rated games (bounded). (The page is
    several reads: one made as the game lands may show the rating from before it.)"""
    deadline = time.monotonic() + timeout
    while True:
        page = await player_page(server, player)
        if (
            any(g["game"] == game_id for g in page["recent_games"])
            and any(h["game"] == game_id for h in page["history"])
            and page["games"] == games
        ):
            return page
        assert time.monotonic() < deadline, f"game {game_id} not on the page after {timeout} s"
        await asyncio.sleep(0.2)


def audits_verify(record: GameRecord) -> None:
    """Every hand of the kept game has its audit, and the project's verifier
    (``protocol.verify``, ``hearts-verify``) finds no problem in it."""
    assert record.hands, "a finished game with no hands"
    for hand in record.hands:
        assert hand.audit is not None, f"hand {hand.number} has no audit"
        assert verify_audit(hand.audit["audit"]) == [], f"hand {hand.number}"


async def kept_exactly_once(
    record: RecordStore, played: dict[str, list[str]], timeout: float = 45
) -> None:
    """Wait (bounded) until every player of ``played`` (player → the rated games they played)
    has all their games rated, then check the database holds each game exactly once: one row
    per game and nothing else, one history point per player per game, each player's count of
    rated games and rating version equal to the games they played, each history point starting
    where the one before it ended (no update lost, none applied twice), and every hand's audit
    verified."""
    games_played = {g for ids in played.values() for g in ids}
    async with record.engine.connect() as connection:

        async def all_rated() -> bool:
            rows = await connection.execute(sa.select(ratings.c.player_id, ratings.c.games))
            counts = {row[0]: row[1] for row in rows}
            await connection.commit()  # the next poll reads a new snapshot
            return all(counts.get(p, 0) >= len(ids) for p, ids in played.items())

        await wait_for(all_rated, "every game rated", timeout)
        await asyncio.sleep(1.0)  # a game posted twice would show by now
        rows = await connection.execute(
            sa.select(games.c.game_id, sa.func.count()).group_by(games.c.game_id)
        )
        assert {row[0]: row[1] for row in rows} == dict.fromkeys(games_played, 1)
        history = rating_history.c
        rows = await connection.execute(
            sa.select(history.player_id, history.game_id, sa.func.count()).group_by(
                history.player_id, history.game_id
            )
        )
        points = {(p, g): n for p, g, n in rows}
        assert points == {(p, g): 1 for p, ids in played.items() for g in ids}
        kept = {row.player_id: row for row in await connection.execute(sa.select(ratings))}
        assert set(kept) == set(played)
        for player, ids in played.items():
            assert kept[player].games == len(ids) == kept[player].version
            chain = list(
                await connection.execute(
                    sa.select(rating_history)
                    .where(history.player_id == player)
                    .order_by(history.games)
                )
            )
            assert [h.games for h in chain] == list(range(1, len(ids) + 1))
            for before, after in itertools.pairwise(chain):
                assert (after.mu_before, after.sigma_before) == (
                    before.mu_after,
                    before.sigma_after,
                )
            assert (chain[-1].mu_after, chain[-1].sigma_after) == (
                kept[player].mu,
                kept[player].sigma,
            )
    for game_id in games_played:
        game = await record.game(game_id)
        assert game is not None and game.rated
        audits_verify(game)


# -- 1. Redis killed and started empty ------------------------------------------------------


@on_postgres
async def test_redis_killed_and_started_empty_forgets_no_account_rating_or_game(
    scratch_redis: ScratchRedis, record_url: str
) -> None:
    """Two nodes on one Redis and one PostgreSQL; two new accounts play a rated game to its end
    and it reaches the database. Then Redis is killed (SIGKILL) and an empty one takes its port.
    The nodes are kept, not restarted: they reconnect by themselves (``/readyz``). Both accounts
    log in with their passwords (their sessions died with Redis); their ratings and histories
    are unchanged, the game is in PostgreSQL (read directly) with every hand's audit verified;
    and the same nodes play on: a second rated game lands beside the first."""
    await migrate(record_url)
    record = RecordStore.open(record_url)
    one = node(scratch_redis.url, record_url)
    two = node(scratch_redis.url, record_url)
    nodes = (one, two)
    try:
        suffix = os.urandom(3).hex()
        names = {f"Ada{suffix}": "ada's long passphrase", f"Bo{suffix}": "bo's own passphrase"}
        sessions = [
            await sign_up(server.base, name, password)
            for server, (name, password) in zip(nodes, names.items(), strict=True)
        ]
        players = [s["player"] for s in sessions]
        clients = [await connect(s, x) for s, x in zip(nodes, sessions, strict=True)]
        played = await quick_play(clients)
        assert played[0] == played[1]  # new accounts, one rating: the queue seats them together
        game_id, over = played[0]
        pages = [await wait_on_page(one, p, game_id, 1) for p in players]
        for client in clients:
            await client.close()

        scratch_redis.kill()
        scratch_redis.start_empty()

        for server in nodes:
            deadline = time.monotonic() + 20
            while True:
                try:
                    with urllib.request.urlopen(server.base + "/readyz", timeout=2) as resp:
                        if resp.status == 200:
                            break
                except OSError:
                    pass
                assert time.monotonic() < deadline, "a node did not reconnect to Redis"
                await asyncio.sleep(0.1)
        again = [
            await login(server.base, name, password)
            for server, (name, password) in zip(nodes[::-1], names.items(), strict=True)
        ]
        assert [s["player"] for s in again] == players
        for player, before in zip(players, pages, strict=True):
            after = await player_page(one, player)
            for field in ("games", "display", "mu", "sigma", "history"):
                assert after[field] == before[field], field
            assert after["games"] == 1 and [h["game"] for h in after["history"]] == [game_id]
            assert [g["game"] for g in after["recent_games"]] == [game_id]
        kept = await record.game(game_id)
        assert kept is not None and kept.rated and list(kept.scores) == over["scores"]
        assert set(players) <= {s.participant for s in kept.seats}
        audits_verify(kept)
        assert {p: r.games for p, r in (await record.ratings(players)).items()} == dict.fromkeys(
            players, 1
        )

        clients = [await connect(s, x) for s, x in zip(nodes[::-1], again, strict=True)]
        played = await quick_play(clients)
        for player, (second, _) in zip(players, played, strict=True):
            page = await wait_on_page(two, player, second, 2)
            assert [h["game"] for h in page["history"]] == [second, game_id]
        for client in clients:
            await client.close()
        for server in nodes:
            quiet_log(server)
    finally:
        one.stop()
        two.stop()
        await record.close()


# -- 2. the archiver killed in the middle of a drain --------------------------------------------


async def three_games_waiting_in_sql(
    server: ServerProcess, identities: list[dict[str, Any]], played: dict[str, list[str]]
) -> None:
    """Three rated games in three rooms, each of the three players in two of them, played
    while the archive's transactions cannot finish (the caller holds ``rating_history``)."""
    for pair in ((0, 1), (1, 2), (2, 0)):
        clients = [await connect(server, identities[k]) for k in pair]
        for client in clients:
            PacedMoves(client)
        for client, (game_id, _) in zip(clients, await quick_play(clients), strict=True):
            played[player_of(client)].append(game_id)
        for client in clients:
            await client.close()


async def three_games_in_one_outbox(
    server: ServerProcess,
    postgres: LocalPostgres,
    identities: list[dict[str, Any]],
    played: dict[str, list[str]],
) -> None:
    """Two players are seated together by quick play; PostgreSQL stops; they play the game and
    two rematches (the queue reads the database, a rematch does not): three games in one
    room's outbox; PostgreSQL starts again."""
    clients = [await connect(server, i) for i in identities]
    for client in clients:
        PacedMoves(client)
    await asyncio.gather(*(c.request("queue", target=50) for c in clients))
    for client in clients:
        await client.next_event("matched", timeout=20)
    assert len({c.room for c in clients}) == 1
    postgres.halt()
    try:
        for game in range(3):
            if game:
                await clients[0].request("rematch")
            await asyncio.gather(
                *(play_to_the_end(c, seed=10 * game + k) for k, c in enumerate(clients))
            )
    finally:
        postgres.resume()
    for client in clients:
        played[player_of(client)] = games_seen(client)
        assert len(played[player_of(client)]) == 3
        await client.close()


@on_postgres
@pytest.mark.parametrize(
    "kill_point", ["in_the_transaction", "after_the_commit", "as_the_backlog_drains"]
)
async def test_an_archiver_killed_in_a_drain_loses_no_game_and_posts_none_twice(
    scratch_redis: ScratchRedis, postgres: LocalPostgres, record_url: str, kill_point: str
) -> None:
    """Finished rated games wait in their rooms' outboxes; the one node (so the one archiver)
    is draining them when it is killed with SIGKILL; another node is started and finishes the
    drain. Whatever the kill point, every game is then in the database exactly once
    (``kept_exactly_once``). The kill points are made certain, not timed:

    - ``in_the_transaction``: the test holds a lock that stops every archive's transaction at
      its last statement (the game, its seats and the ratings written, nothing committed); three
      games of three players, each in two of them, wait so; the node dies with none kept.
    - ``after_the_commit``: the same, then Redis is frozen (SIGSTOP) and the lock released:
      the transactions commit but no room can hear of it; the node dies once a game is kept.
    - ``as_the_backlog_drains``: three games wait in one room's outbox through a PostgreSQL
      outage; it comes back and the node dies the moment the first game is kept, part-way
      through that room's drain (or, on a fast machine, just after it).

    The new node claims the rooms when the dead node's claims lapse (``TICK_LEASE``, 10 s)."""
    await migrate(record_url)
    record = RecordStore.open(record_url)
    database = Database(postgres, record_url)
    first = node(scratch_redis.url, record_url)
    second: ServerProcess | None = None
    try:
        identities = [await guest(first.base, f"Pl{k}") for k in range(3)]
        played: dict[str, list[str]] = {i["player"]: [] for i in identities}
        if kill_point == "as_the_backlog_drains":
            del played[identities[2]["player"]]
            await three_games_in_one_outbox(first, postgres, identities[:2], played)
            await wait_for(database.any_game_kept, "a game kept", 15)
        else:
            await database.hold_rating_history()
            await three_games_waiting_in_sql(first, identities, played)
            await wait_for(database.waiting_for_a_lock, "an archive waiting", 10)
            if kill_point == "after_the_commit":
                scratch_redis.freeze()
                await database.release()
                await wait_for(database.any_game_kept, "a game kept", 10)
        first.kill()
        kept = await database.games_kept()
        print(f"{kill_point}: {kept} of 3 games kept when the node was killed")
        assert (kept == 0) if kill_point == "in_the_transaction" else (kept >= 1)
        scratch_redis.thaw()
        await database.release()
        second = node(scratch_redis.url, record_url)
        await kept_exactly_once(record, played)
        quiet_log(second)
    finally:
        first.kill()
        if second is not None:
            second.stop()
        await database.close()
        await record.close()


# -- 3. PostgreSQL out during play ----------------------------------------------------------

@on_postgres
@pytest.mark.parametrize(
    "outage",
    [
        "stopped",
        "hung",
    ],
)
async def test_the_database_out_during_play_stalls_no_move_and_loses_no_game(
    clean_redis: str, postgres: LocalPostgres, record_url: str, outage: str
) -> None:
    """A rated quick-play game is in play when the database goes out for ``DB_OUTAGE_SECONDS``:
    ``stopped`` (``pg_ctl stop -m fast``: connections refused) or ``hung`` (it takes the
    archive's write and never answers). The player finishes the game and plays rematches in
    the same room until it is back. Every command is answered in normal time (each within
    ``MAX_MOVE_SECONDS``, while the database is out); the games that end wait in the room's
    outbox (no ``ratings`` event); once it is back each lands in the database, rated once and
    in order, its audits verified; the node logs the outage once when it starts and once when
    it ends."""
    await migrate(record_url)
    record = RecordStore.open(record_url)
    database = Database(postgres, record_url)
    server = node(clean_redis, record_url)
    try:
        player = await new_player(server, "Steady")
        await player.request("queue", target=50)  # the queue reads the rating: before the outage
        await player.next_event("matched", timeout=20)
        moves = PacedMoves(player)
        if outage == "stopped":
            postgres.halt()
        else:
            await database.hold_rating_history()
        down = time.monotonic()
        moves.strict = True
        try:
            for game in itertools.count():
                await play_to_the_end(player, seed=game, timeout=60)
                if time.monotonic() - down >= DB_OUTAGE_SECONDS:
                    break
                await player.request("rematch")
            finished = games_seen(player)
            assert not [f for f in player.frames if f.get("event") == "ratings"]
        finally:
            moves.strict = False
            if outage == "stopped":
                postgres.resume()
            else:
                await database.release()
        up = time.monotonic()
        during = moves.during(down, up)
        slowest = ", ".join(f"{k} {t * 1000:.0f} ms at {s - down:.1f} s" for s, t, k in during[:3])
        print(
            f"database {outage} for {up - down:.1f} s; {len(finished)} games ended meanwhile;"
            f" {len(during)} commands answered, the slowest: {slowest}"
        )
        assert len(finished) >= 2 and len(during) >= 100

        for game_id in finished:  # each game's ratings, in order, once the database is back
            assert (await player.next_event("ratings", timeout=30))["game"] == game_id
        me = player_of(player)
        for game_id in finished:
            kept = await record.game(game_id)
            assert kept is not None and kept.rated
            audits_verify(kept)
        assert (await record.ratings([me]))[me].games == len(finished)
        assert [h.game_id for h in await record.rating_history(me)] == finished[::-1]

        log = quiet_log(server)
        # A hang shorter than one attempt's patience is slow, not an outage: nothing to log.
        said = 1 if outage == "stopped" or DB_OUTAGE_SECONDS > ATTEMPT_SECONDS else 0
        assert log.count(f"{ARCHIVER} failing") == said, log[-3000:]
        assert log.count(f"{ARCHIVER} recovered after") == said, log[-3000:]
        await player.close()
    finally:
        await database.release()
        server.stop()
        await database.close()
        await record.close()
