"""Shared fixtures: a private Redis server and a private PostgreSQL for the session, room stores
of every backend, and empty databases for the store of record."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest
import redis

from server.record.migrate import migrate
from server.record.store import RecordStore
from server.store import MemoryRoomStore, RoomStore
from server.store.league import LeagueStore
from server.store.memory.league import MemoryLeagueStore
from server.store.redis.league import RedisLeagueStore
from server.store.redis.rooms import RedisRoomStore
from server.store.sqlite import open_room_store
from tests.support.postgres import LocalPostgres
from tests.support.redis_cluster import LocalCluster

TEST_PREFIX = "hearts-test"
Kept = TypeVar("Kept", RoomStore, LeagueStore)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SOCKET_NAME = "redis.sock"


def _start_redis() -> tuple[subprocess.Popen[bytes], int, str]:
    """Start a throwaway redis-server on a free port and wait until it answers PING."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    workdir = tempfile.mkdtemp(prefix="hearts-test-redis-")
    last_error = ""
    for _attempt in range(3):  # the free port can be taken between probing and binding
        port = _free_port()
        options = {
            "--save": "",  # no snapshots, no AOF: a scratch server
            "--appendonly": "no",
            "--port": str(port),
            "--bind": "127.0.0.1",
            "--dir": workdir,
            "--unixsocket": os.path.join(workdir, SOCKET_NAME),  # beside the port: unix:// too
            "--unixsocketperm": "700",
        }
        process = subprocess.Popen(
            [binary, *(word for option in options.items() for word in option)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        client = redis.Redis(port=port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if client.ping():
                    client.close()
                    return process, port, workdir
            except redis.RedisError as exc:
                last_error = str(exc)
                time.sleep(0.05)
        client.close()
        process.kill()
        output = process.communicate()[0].decode(errors="replace")
        last_error = f"{last_error}\n{output}"
    shutil.rmtree(workdir, ignore_errors=True)
    pytest.fail(f"could not start a private redis-server: {last_error}")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """URL of a private redis-server for this test session (never the shared one on 6379)."""
    process, port, workdir = _start_redis()
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def redis_unix_url(clean_redis: str) -> str:
    """The same private Redis (emptied), by its Unix socket."""
    client = redis.Redis.from_url(clean_redis)
    try:
        (path,) = (
            value.decode() if isinstance(value, bytes) else value
            for value in client.config_get("unixsocket").values()
        )
    finally:
        client.close()
    return f"unix://{path}?db=0"


@pytest.fixture
def clean_redis(redis_url: str) -> str:
    """The private Redis, emptied (data and cached scripts) before the test."""
    client = redis.Redis.from_url(redis_url)
    try:
        client.flushall()
        client.script_flush()
    finally:
        client.close()
    return redis_url


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """A private Redis Cluster (3 primaries, 3 replicas) for this test session."""
    cluster = LocalCluster()
    try:
        cluster.start()
    except (RuntimeError, subprocess.SubprocessError) as exc:
        cluster.stop()
        pytest.fail(f"could not start a private Redis Cluster: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def own_cluster() -> Iterator[LocalCluster]:
    """A cluster of this test's own, for tests that kill its nodes (a failover changes which
    nodes are primaries)."""
    cluster = LocalCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def clean_cluster(redis_cluster: LocalCluster) -> str:
    """The private cluster's URL (``redis+cluster://…``), every primary emptied first."""
    redis_cluster.wait_healthy()
    redis_cluster.flush()
    return redis_cluster.url


def _backend_url(request: pytest.FixtureRequest, backend: str) -> str | None:
    if backend == "redis":
        return str(request.getfixturevalue("clean_redis"))
    if backend == "cluster":
        return str(request.getfixturevalue("clean_cluster"))
    return None


class BackendFactory:
    """Makes stores of one backend ("memory", "redis" or "cluster") for one test; closes them
    afterwards."""

    def __init__(self, backend: str, redis_url: str | None) -> None:
        self.backend = backend
        self.redis_url = redis_url
        self._made: list[Any] = []

    def _keep(self, store: Kept) -> Kept:
        self._made.append(store)
        return store

    async def close_all(self) -> None:
        for store in self._made:
            await store.close()


class StoreFactory(BackendFactory):
    """Makes stores of one backend for one test and closes them afterwards.

    ``peer(store)`` is another node's view of the same data: a second Redis store on the same
    server and prefix, or, for memory and the journaled memory store (one process, one node),
    the very same store. Each journaled store has a data folder of its own under ``data``.
    """

    def __init__(self, backend: str, redis_url: str | None, data: Path | None = None) -> None:
        super().__init__(backend, redis_url)
        self.data = data

    def __call__(self, *, max_log: int = 5000) -> RoomStore:
        store: RoomStore
        if self.backend == "memory":
            store = MemoryRoomStore(max_log=max_log)
        elif self.backend == "journal":
            assert self.data is not None
            store = open_room_store(self.data / f"node{len(self._made)}", max_log=max_log)
        else:
            assert self.redis_url is not None
            store = RedisRoomStore(self.redis_url, prefix=TEST_PREFIX, max_log=max_log)
        return self._keep(store)

    def peer(self, store: RoomStore) -> RoomStore:
        if isinstance(store, RedisRoomStore):
            return self._keep(RedisRoomStore(store.url, prefix=store.prefix, max_log=store.max_log))
        return store


@pytest.fixture(params=["memory", "journal", "redis", "cluster"])
async def store_factory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[StoreFactory]:
    """A factory of stores of each backend in turn (journaled ones in the test's temp dir,
    Redis ones on the flushed private server, cluster ones on the flushed private cluster)."""
    backend: str = request.param
    factory = StoreFactory(backend, _backend_url(request, backend), tmp_path / "journals")
    yield factory
    await factory.close_all()


@pytest.fixture
def store(store_factory: StoreFactory) -> RoomStore:
    """A fresh store of each backend in turn, with the default configuration."""
    return store_factory()


class LeagueFactory(BackendFactory):
    """Makes league stores of one backend for one test and closes them afterwards.

    ``peer(store)`` is another node's view of the same league: a second Redis store on the same
    server and prefix, or, for memory (one process, one node), the very same store.
    """

    def __call__(self, **options: Any) -> LeagueStore:
        store: LeagueStore
        if self.backend == "memory":
            store = MemoryLeagueStore(**options)
        else:
            assert self.redis_url is not None
            store = RedisLeagueStore(self.redis_url, prefix=TEST_PREFIX, **options)
        return self._keep(store)

    def peer(self, store: LeagueStore) -> LeagueStore:
        if isinstance(store, RedisLeagueStore):
            other = RedisLeagueStore(
                store.url, prefix=store.prefix, assignment_ttl=store.assignment_ttl
            )
            return self._keep(other)
        return store


@pytest.fixture(params=["memory", "redis", "cluster"])
async def league_factory(request: pytest.FixtureRequest) -> AsyncIterator[LeagueFactory]:
    """A factory of league stores of each backend in turn (Redis on the flushed private server,
    or the flushed private cluster)."""
    backend: str = request.param
    factory = LeagueFactory(backend, _backend_url(request, backend))
    yield factory
    await factory.close_all()


@pytest.fixture
def league(league_factory: LeagueFactory) -> LeagueStore:
    """A fresh league store of each backend in turn, with the default configuration."""
    return league_factory()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright, one per test module (Playwright cannot download one)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    from tests.support.browser_support import CHROMIUM_ARGS, chromium_path

    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


# The store of record (server/record): a private PostgreSQL per test session, and an empty
# database of each kind per test.


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """A private PostgreSQL server for this test session (tests/support/postgres.py: Debian's
    binaries in a temp dir on a free port, run as the postgres user when we are root; never the
    machine's shared server on 5432)."""
    server = LocalPostgres()
    try:
        server.start()
    except (RuntimeError, subprocess.SubprocessError) as exc:
        server.stop()
        pytest.fail(f"could not start a private PostgreSQL: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
async def record_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """The URL of an empty database (no schema yet) of each kind in turn: a SQLite file in the
    test's temp dir, or a new database on the private PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'record.sqlite3'}"
    server: LocalPostgres = request.getfixturevalue("postgres")
    name = f"t_{uuid.uuid4().hex[:16]}"
    connection = await asyncpg.connect(server.dsn())
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return server.url(name)


@pytest.fixture
async def record_store(record_url: str) -> AsyncIterator[RecordStore]:
    """A store of record of each kind in turn, migrated to the newest schema."""
    await migrate(record_url)
    store = RecordStore.open(record_url)
    yield store
    await store.close()


@pytest.fixture(autouse=True)
def own_data_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test's in-process nodes keep their store of record in a folder of its own, never
    in the user's data folder (``server/record/engine.py`` ``default_data_dir``)."""
    monkeypatch.setenv("HEARTS_DATA_DIR", str(tmp_path / "data"))
