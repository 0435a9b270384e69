"""The node's collector policy (server/ops/gc_pacing.py), and the socket lifecycle it relies on: a
socket served and closed leaves no reference cycle behind."""

from __future__ import annotations

import asyncio
import gc
import math
import socket
import weakref
from collections.abc import Iterator

import pytest
import uvicorn
import uvloop
from websockets.server import ServerProtocol

from load_tests.paced_report import Window, node_gc_line
from protocol.client import HeartsClient, guest
from protocol.codec import MAX_FRAME_BYTES
from server.app import create_app
from server.config import Settings
from server.net.http_protocol import HttpProtocol
from server.net.ws_protocol import BatchingWebSocketProtocol
from server.ops import gc_pacing, metrics


@pytest.fixture
def policy() -> Iterator[None]:
    gc.collect()
    gc_pacing.install()
    try:
        yield
    finally:
        gc_pacing.uninstall()


class Node:
    """A container the collector tracks."""

    def __init__(self) -> None:
        self.other: Node | None = None


def test_survivors_of_a_collection_are_frozen_and_young_cycles_still_collected(
    policy: None,
) -> None:
    kept = [Node() for _ in range(100)]
    frozen = gc.get_freeze_count()
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle, garbage once the names go
    del a, b
    collected = gc.collect(0)
    assert collected >= 2  # young cyclic garbage is still found
    assert gc.get_freeze_count() >= frozen + len(kept)  # the survivors went to the permanent
    in_generations = {id(o) for g in range(3) for o in gc.get_objects(g)}
    assert not any(id(k) in in_generations for k in kept)  # none is traversed again


def _in_generations() -> set[int]:
    return {id(o) for g in range(3) for o in gc.get_objects(g)}


def test_paced_collections_freeze_what_survived_each_period(policy: None) -> None:
    async def run() -> None:
        paced = gc_pacing.PacedCollections(every=0.01)
        paced.start()
        try:
            kept = [Node() for _ in range(50)]  # far under the threshold: only the pacer collects
            assert any(id(k) in _in_generations() for k in kept)
            await asyncio.sleep(0.05)
            assert not any(id(k) in _in_generations() for k in kept)
        finally:
            paced.stop()

    asyncio.run(run())


def test_paced_collections_do_nothing_unless_installed_and_stop_when_stopped() -> None:
    collections: list[str] = []

    def seen(phase: str, info: dict[str, object]) -> None:
        if phase == "stop":
            collections.append(phase)

    async def run(install: bool) -> int:
        paced = gc_pacing.PacedCollections(every=0.005)
        if install:
            gc_pacing.install()
        gc.callbacks.append(seen)
        gc.disable()  # no collection but the pacer's
        try:
            paced.start()
            await asyncio.sleep(0.05)
            paced.stop()
            during = len(collections)
            await asyncio.sleep(0.03)
            assert len(collections) == during  # stopped
            return during
        finally:
            gc.enable()
            gc.callbacks.remove(seen)
            if install:
                gc_pacing.uninstall()

    assert asyncio.run(run(install=False)) == 0
    collections.clear()
    assert asyncio.run(run(install=True)) >= 3


def test_install_twice_keeps_one_callback(policy: None) -> None:
    gc_pacing.install()
    assert gc.callbacks.count(gc_pacing._on_collection) == 1


# Server-side objects of a socket: none may be left in a cycle once it is closed.
SOCKET_PACKAGES = ("server", "uvicorn", "websockets", "httptools")
SOCKET_TYPES = {
    "BatchingWebSocketProtocol",
    "DirectSend",
    "RoundTrip",
    "ServerProtocol",
    "HttpToolsProtocol",
    "HttpProtocol",
    "HttpRequestParser",
    "Connection",
    "SocketDriver",
    "DirectWriter",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _seat_and_close(port: int) -> tuple[list[object], list[object]]:
    settings = Settings.from_env()
    config = uvicorn.Config(
        create_app(settings),
        host="127.0.0.1",
        port=port,
        http=HttpProtocol,
        ws=BatchingWebSocketProtocol,
        ws_max_size=MAX_FRAME_BYTES,
        ws_per_message_deflate=settings.ws_deflate,
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.02)
    base, url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
    clients = []
    try:
        host = await HeartsClient.connect(url, (await guest(base, "Host"))["token"])
        room = (await host.request("open_room"))["room"]
        clients.append(host)
        for k in range(2):
            c = await HeartsClient.connect(url, (await guest(base, f"Guest{k}"))["token"])
            await c.request("join", room=room)
            clients.append(c)
        gc.collect()
        seated = list(gc.garbage)
        gc.garbage.clear()
        served = [
            weakref.ref(o)
            for o in gc.get_objects()
            if isinstance(o, (BatchingWebSocketProtocol, ServerProtocol))
        ]
        assert len(served) == 6  # three sockets, each with its two
        host.ws.transport.abort()  # a dropped connection (no closing handshake), then
        for c in clients:  # the others close cleanly
            await c.close()
        clients.clear()
        await asyncio.sleep(0.5)  # the server sees each close
        # The collector is off: only reference counting can have freed them.
        assert [r() for r in served if r() is not None] == []
        gc.collect()
        closed = list(gc.garbage)
        gc.garbage.clear()
    finally:
        server.should_exit = True
        await serving
    return seated, closed


def test_a_socket_leaves_no_reference_cycle_when_seated_or_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PORT", "0")
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # cyclic garbage is kept in gc.garbage, to be named
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            seated, closed = runner.run(_seat_and_close(_free_port()))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    for moment, garbage in (("seated", seated), ("closed", closed)):
        # by module too: a database driver's "Connection" (aiosqlite's is a thread) is not ours
        left = sorted(
            {
                type(o).__qualname__
                for o in garbage
                if type(o).__module__.split(".")[0] in SOCKET_PACKAGES
            }
            & SOCKET_TYPES
        )
        assert not left, f"{moment}: in reference cycles: {left}"
        parsers = [
            o
            for o in garbage
            if type(o).__name__ == "generator" and "websockets" in o.gi_code.co_filename
        ]
        assert not parsers, f"{moment}: websockets' parser left in a cycle"


def test_each_collection_is_timed_in_the_pause_histogram(policy: None) -> None:
    def count() -> float:
        value = metrics.REGISTRY.get_sample_value("hearts_gc_pause_seconds_count")
        return value or 0.0

    before = count()
    gc.collect(0)
    gc.collect()
    assert count() == before + 2


def test_the_report_counts_the_pauses_in_its_window() -> None:
    window = Window("steady", 10, 0.0)
    window.node_gc_start = {0.01: 3.0, 0.1: 4.0, math.inf: 4.0}
    window.node_gc_end = {0.01: 5.0, 0.1: 7.0, math.inf: 7.0}  # two under 10 ms, one under 100
    assert node_gc_line(window).startswith("node_gc_pauses: 3 in the window, the longest ≤ 100 ms")
    window.node_gc_end = dict(window.node_gc_start)
    assert node_gc_line(window).startswith("node_gc_pauses: 0 in the window")
