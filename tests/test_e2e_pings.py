"""Pings are WebSocket control frames (server/ws_protocol.py): the first comes soon after the
handshake, any WebSocket implementation answers it, and the server sends no ping message of
the protocol's own."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from websockets.frames import Frame, Opcode

from load_tests.lean_socket import LeanSocket
from protocol.codec import MAX_FRAME_BYTES
from tests.server_process import ServerProcess


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
