"""The socket writer (``server.net.socket_writer``): what waits goes in one write, in order; a full
buffer holds frames until it drains; a connection dropped for lagging gets what was queued,
then a close with 1008; and without this server's protocol a task sends each frame."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from protocol.codec import JSON, Codec
from server.net.connection import OUTBOX_LIMIT, Connection
from server.net.extensions import DIRECT
from server.net.socket_writer import DirectWriter, TaskWriter, start_writer


class Sink:
    """Stands for ``ws_protocol.DirectSend``: records writes, or declines them while full."""

    def __init__(self) -> None:
        self.writes: list[list[bytes | str]] = []
        self.full = False
        self.gone = False
        self.on_writable: Any = None
        self.closed: tuple[int, str] | None = None

    def write(self, frames: Sequence[bytes | str]) -> bool:
        if self.gone:
            raise ConnectionResetError
        if self.full:
            return False
        self.writes.append(list(frames))
        return True

    def close(self, code: int, reason: str = "") -> None:
        self.closed = (code, reason)

    def drained(self) -> None:
        self.full = False
        self.on_writable()


class FakeSocket:
    def __init__(self, sink: Sink | None = None) -> None:
        self.scope: dict[str, Any] = {"extensions": {DIRECT: {"send": sink}} if sink else {}}
        self.sent: list[bytes | str] = []
        self.closed: tuple[int, str] | None = None

    async def send_bytes(self, data: bytes) -> None:
        self.sent.append(data)

    async def send_text(self, data: str) -> None:
        self.sent.append(data)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed = (code, reason)


def connection() -> Connection:
    return Connection(SimpleNamespace(id="n"), Codec(JSON))


async def turns(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_what_waits_in_one_step_goes_in_one_write_in_order() -> None:
    sink, conn = Sink(), connection()
    writer = start_writer(FakeSocket(sink), conn)  # type: ignore[arg-type]
    assert isinstance(writer, DirectWriter)
    for frame in (b"a", "b", b"c"):
        conn.send_frame(frame)
    assert sink.writes == []  # not before the step that queued them is over
    await turns()
    assert sink.writes == [[b"a", "b", b"c"]]
    conn.send_frame(b"d")
    await turns()
    assert sink.writes == [[b"a", "b", b"c"], [b"d"]]


async def test_a_full_buffer_holds_the_frames_until_it_drains() -> None:
    sink, conn = Sink(), connection()
    start_writer(FakeSocket(sink), conn)  # type: ignore[arg-type]
    sink.full = True
    conn.send_frame(b"a")
    await turns()
    conn.send_frame(b"b")
    await turns()
    assert sink.writes == []
    sink.drained()
    await turns()
    assert sink.writes == [[b"a", b"b"]]


async def test_a_dropped_connection_gets_what_was_queued_then_a_close() -> None:
    sink, conn = Sink(), connection()
    sock = FakeSocket(sink)
    start_writer(sock, conn)  # type: ignore[arg-type]
    sink.full = True  # the client stopped reading
    for k in range(OUTBOX_LIMIT + 5):
        conn.send_frame(b"%d" % k)
    assert conn.closed and conn.dropped
    sink.drained()
    await turns()
    assert sink.writes == [[b"%d" % k for k in range(OUTBOX_LIMIT)]]
    assert sink.closed == (1008, "too far behind")


async def test_a_gone_socket_is_left_alone() -> None:
    sink, conn = Sink(), connection()
    sock = FakeSocket(sink)
    start_writer(sock, conn)  # type: ignore[arg-type]
    sink.gone = True
    conn.send_frame(b"a")
    await turns()
    assert conn.pending == [] and sock.closed is None and sink.closed is None


async def test_without_the_direct_send_a_task_sends_each_frame() -> None:
    conn, sock = connection(), FakeSocket()
    writer = start_writer(sock, conn)  # type: ignore[arg-type]
    assert isinstance(writer, TaskWriter)
    try:
        conn.send_frame(b"a")
        conn.send_frame("b")
        await writer.drain()
        assert sock.sent == [b"a", "b"]
    finally:
        writer.stop()
