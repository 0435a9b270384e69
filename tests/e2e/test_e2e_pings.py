"""Pings are WebSocket control frames (server/net/ws_protocol.py): the first comes soon after the
handshake, any WebSocket implementation answers it, and the server sends no ping message of
the protocol's own."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest
from websockets.frames import Frame, Opcode

from load_tests.lean_socket import LeanSocket
from protocol.codec import MAX_FRAME_BYTES
from tests.support.server_process import ServerProcess


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.stop()


class Watching(LeanSocket):
    """A raw client that notes when pings come (websockets' protocol still answers them)."""

    pings: list[float]
    payloads: list[bytes]

    def _frame(self, frame: Frame) -> None:
        if frame.opcode is Opcode.PING:
            self.pings.append(time.monotonic())
            self.payloads.append(bytes(frame.data))
        super()._frame(frame)


async def test_the_first_ping_comes_within_seconds_and_messages_hold_no_ping(
    server: ServerProcess,
) -> None:
    Watching.pings, Watching.payloads = [], []
    messages: list[bytes | str] = []
    opened = time.monotonic()
    sock = await Watching.open(
        server.ws, "hearts.v1.json", deflate=False, max_size=MAX_FRAME_BYTES, timeout=5
    )
    sock.deliver = messages.append
    try:
        for _ in range(60):
            if Watching.pings:
                break
            await asyncio.sleep(0.1)
        assert Watching.pings, "no WebSocket ping within 6 s of the handshake"
        assert Watching.pings[0] - opened < 4.0
        # The server frames it itself on a socket that reads its own frames: a final ping
        # with the four-byte payload its pong must echo.
        assert len(Watching.payloads[0]) == 4
        sock.send('{"type": "ping", "id": 1}')  # the client's own clock probe still works
        for _ in range(50):
            if messages:
                break
            await asyncio.sleep(0.1)
        assert [m for m in messages if '"ping"' in str(m)] == []
        assert '"ok"' in str(messages[0]) and "server_time" in str(messages[0])
        assert sock.close_code is None  # answered pings keep the socket open
    finally:
        sock.abort()


class Chunks(LeanSocket):
    """A raw client that notes, for each ping, whether a message came in the same read."""

    rode: list[bool]
    pinged_at: list[float]
    _message_in_read = False

    def data_received(self, data: bytes) -> None:
        self._message_in_read = False
        super().data_received(data)

    def _read_frames(self) -> None:
        deliver = self.deliver

        def noted(message: bytes | str) -> None:
            self._message_in_read = True
            deliver(message)

        self.deliver = noted
        try:
            super()._read_frames()
        finally:
            self.deliver = deliver

    def _frame(self, frame: Frame) -> None:
        if frame.opcode is Opcode.PING:
            self.rode.append(self._message_in_read)
            self.pinged_at.append(time.monotonic())
        super()._frame(frame)


async def test_a_due_ping_rides_on_frames_and_an_idle_socket_still_gets_it_alone() -> None:
    """Pings 2 s apart (``HEARTS_WS_PING_INTERVAL``): on a socket sent frames all the time each
    ping after the first goes out in the same write as a message; an idle socket gets its pings
    alone, no later than the interval."""
    proc = ServerProcess(HEARTS_WS_PING_INTERVAL="2").start()
    try:
        busy = await Chunks.open(
            proc.ws, "hearts.v1.json", deflate=False, max_size=MAX_FRAME_BYTES, timeout=5
        )
        busy.rode, busy.pinged_at = [], []
        busy.deliver = lambda message: None
        idle = await Chunks.open(
            proc.ws, "hearts.v1.json", deflate=False, max_size=MAX_FRAME_BYTES, timeout=5
        )
        idle.rode, idle.pinged_at = [], []
        idle.deliver = lambda message: None
        deadline = time.monotonic() + 9
        n = 0
        while time.monotonic() < deadline and len(busy.rode) < 4:
            n += 1
            busy.send(json.dumps({"type": "ping", "id": n}))  # an ok comes back for each
            await asyncio.sleep(0.04)
        assert len(busy.rode) >= 4, busy.rode
        assert busy.rode[0] is False  # the first ping, 2 s after the handshake, goes alone
        assert all(busy.rode[1:]), busy.rode
        assert len(idle.pinged_at) >= 3 and not any(idle.rode)
        gaps = [b - a for a, b in zip(idle.pinged_at, idle.pinged_at[1:], strict=False)]
        assert all(1.5 < g < 2.6 for g in gaps), gaps
        assert busy.close_code is None and idle.close_code is None  # pongs keep them open
        busy.abort()
        idle.abort()
    finally:
        proc.stop()
