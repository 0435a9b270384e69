"""The socket writer (``server.socket_writer``): everything waiting goes in one write where the
server offers it, frames keep their order, and a connection dropped for lagging is drained,
then closed."""

from __future__ import annotations

import asyncio
from typing import Any

from server.socket_writer import run_writer
from server.ws_protocol import BATCH


class FakeSocket:
    def __init__(self, batching: bool) -> None:
        self.scope: dict[str, Any] = {"extensions": {BATCH: {}} if batching else {}}
        self.messages: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None

    async def _send(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    async def send_bytes(self, data: bytes) -> None:
        self.messages.append({"type": "websocket.send", "bytes": data})

    async def send_text(self, data: str) -> None:
        self.messages.append({"type": "websocket.send", "text": data})

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed = (code, reason)


class Outbox:
    """What run_writer needs of a Connection: its outbox and whether it was dropped."""

    def __init__(self) -> None:
        self.outbox: asyncio.Queue[bytes | str | None] = asyncio.Queue()
        self.closed = False
        self.id = "n/1"


async def run(sock: FakeSocket, conn: Outbox) -> None:
    await asyncio.wait_for(run_writer(sock, conn), 2.0)  # type: ignore[arg-type]


async def test_what_waits_goes_in_one_write_in_order() -> None:
    sock, conn = FakeSocket(batching=True), Outbox()
    for frame in (b"a", "b", b"c"):
        conn.outbox.put_nowait(frame)
    conn.outbox.put_nowait(None)
    await run(sock, conn)
    assert sock.messages == [{"type": BATCH, "frames": [b"a", "b", b"c"]}]
    assert sock.closed is None


async def test_without_the_extension_each_frame_is_its_own_message() -> None:
    sock, conn = FakeSocket(batching=False), Outbox()
    for frame in (b"a", "b"):
        conn.outbox.put_nowait(frame)
    conn.outbox.put_nowait(None)
    await run(sock, conn)
    assert sock.messages == [
        {"type": "websocket.send", "bytes": b"a"},
        {"type": "websocket.send", "text": "b"},
    ]


async def test_a_dropped_connection_gets_what_was_queued_then_a_close() -> None:
    sock, conn = FakeSocket(batching=True), Outbox()
    conn.outbox.put_nowait(b"a")
    conn.closed = True  # fell too far behind (Connection.send_frame)
    conn.outbox.put_nowait(None)
    conn.outbox.put_nowait(b"late")  # queued before the writer ran: still sent
    conn.outbox.put_nowait(None)
    await run(sock, conn)
    assert sock.messages == [{"type": BATCH, "frames": [b"a", b"late"]}]
    assert sock.closed == (1008, "too far behind")

