"""A detached socket (``server.net.socket_driver``): messages are taken in order, one command at a
time, by a task that exists only while any wait; a fast sender has its reading paused and then
resumed; a close ends the socket after the answer before it; and the node forgets a connection
once, after the command in progress."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from protocol.codec import JSON, Codec
from server.net.connection import Closing, Connection
from server.net.socket_driver import INBOX_HIGH, SocketDriver


class FakeSend:
    """Stands for ``ws_protocol.DirectSend`` on a detached socket."""

    def __init__(self) -> None:
        self.on_message: Callable[[bytes | str], None] | None = None
        self.on_closed: Callable[[], None] | None = None
        self.on_writable: Any = None
        self.writes: list[list[bytes | str]] = []
        self.closed: tuple[int, str] | None = None
        self.paused = False
        self.pauses = 0

    def detach(
        self, on_message: Callable[[bytes | str], None], on_closed: Callable[[], None]
    ) -> None:
        self.on_message, self.on_closed = on_message, on_closed

    def write(self, frames: Sequence[bytes | str]) -> bool:
        self.writes.append(list(frames))
        return True

    def close(self, code: int, reason: str = "") -> None:
        self.closed = (code, reason)

    def pause_reading(self) -> None:
        self.paused = True
        self.pauses += 1

    def resume_reading(self) -> None:
        self.paused = False


class SlowConnection(Connection):
    """Records each frame; a frame ``b"wait"`` waits for ``go``; ``b"bad"`` closes the socket."""

    def __init__(self) -> None:
        super().__init__(SimpleNamespace(id="n"), Codec(JSON))  # type: ignore[arg-type]
        self.taken: list[bytes | str] = []
        self.arrived: list[float | None] = []
        self.busy = 0
        self.most_busy = 0
        self.go = asyncio.Event()

    async def on_frame(self, frame: bytes | str, arrived: float | None = None) -> None:
        self.busy += 1
        self.most_busy = max(self.most_busy, self.busy)
        try:
            self.taken.append(frame)
            self.arrived.append(arrived)
            if frame == b"wait":
                await self.go.wait()
            if frame == b"bad":
                self.send_frame(b"answer")
                raise Closing(1008, "flood")
        finally:
            self.busy -= 1


class Node:
    def __init__(self) -> None:
        self.gone: list[Connection] = []

    async def forget(self, conn: Connection) -> None:
        self.gone.append(conn)


async def turns(n: int = 10) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def driven() -> tuple[SlowConnection, FakeSend, Node, SocketDriver]:
    conn, send, node = SlowConnection(), FakeSend(), Node()
    driver = SocketDriver(conn, send, node.forget)  # type: ignore[arg-type]
    return conn, send, node, driver


async def test_messages_are_taken_in_order_one_at_a_time_and_no_task_waits_when_idle() -> None:
    conn, send, _, driver = driven()
    assert send.on_message is not None
    for frame in (b"wait", b"a", "b", b"c"):
        send.on_message(frame)
    await turns()
    assert conn.taken == [b"wait"]  # the rest wait for the first command
    conn.go.set()
    await turns()
    assert conn.taken == [b"wait", b"a", "b", b"c"]
    assert conn.most_busy == 1
    assert driver._task is None  # idle: no task holds the socket


async def test_a_message_is_judged_by_when_it_was_read_not_when_its_command_runs() -> None:
    """The rate limit (``Connection.check_rate``) gets each message's time of reading: one that
    waited behind a slow command was not sent at the moment it is taken."""
    conn, send, _, _ = driven()
    assert send.on_message is not None
    send.on_message(b"wait")
    read_at = time.monotonic()
    send.on_message(b"a")
    await asyncio.sleep(0.2)
    conn.go.set()
    await turns()
    assert conn.taken == [b"wait", b"a"]
    arrived = conn.arrived[1]
    assert arrived is not None and abs(arrived - read_at) < 0.05


async def test_a_fast_sender_is_paused_then_resumed() -> None:
    conn, send, _, _ = driven()
    assert send.on_message is not None
    send.on_message(b"wait")
    for k in range(INBOX_HIGH + 3):
        send.on_message(b"%d" % k)
    assert send.paused
    conn.go.set()
    await turns(60)
    assert not send.paused
    assert len(conn.taken) == INBOX_HIGH + 4


async def test_a_close_sends_the_answer_before_it_and_drops_what_waits() -> None:
    conn, send, node, _ = driven()
    assert send.on_message is not None and send.on_closed is not None
    for frame in (b"bad", b"after"):
        send.on_message(frame)
    await turns()
    assert send.writes == [[b"answer"]]
    assert send.closed == (1008, "flood")
    assert conn.taken == [b"bad"]
    send.on_closed()
    await turns()
    assert node.gone == [conn]


async def test_the_node_forgets_the_connection_once_after_the_command_in_progress() -> None:
    conn, send, node, _ = driven()
    assert send.on_message is not None and send.on_closed is not None
    send.on_message(b"wait")
    send.on_message(b"never")
    await turns()
    send.on_closed()
    await turns()
    assert node.gone == []  # the command still runs
    send.on_message(b"late")  # read after the close: not taken
    conn.go.set()
    await turns()
    assert node.gone == [conn]
    assert conn.taken == [b"wait"]
