"""A socket detached from its ASGI app, driving its ``Connection`` from the protocol's callbacks.

After the accept, the app hands the socket over (``extensions.DirectSocket.detach``) and its ASGI
coroutine returns. Messages then arrive in the protocol's read callback and wait in a small inbox;
a task takes them in order, one command at a time, and exists only while any wait, so an idle
socket holds no task and no coroutine frame. A client that sends faster than its commands run has
its reading paused once ``INBOX_HIGH`` messages wait (TCP then pushes back on it), and resumed
once they are done. Each message keeps the time it was read: the rate limit judges it by that,
not by when its command runs, so the time it waited behind slower commands is not its sender's.

When the connection is gone, however it ended, the node's ``on_gone`` runs once, after any
command in progress has finished.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from server.net.connection import Closing, Connection
from server.net.extensions import DirectSocket
from server.net.socket_writer import DirectWriter

log = logging.getLogger(__name__)

INBOX_HIGH = 16  # messages waiting before reading pauses


class SocketDriver:
    __slots__ = ("_gone", "_inbox", "_loop", "_on_gone", "_task", "conn", "send", "writer")

    def __init__(
        self,
        conn: Connection,
        send: DirectSocket,
        on_gone: Callable[[Connection], Coroutine[Any, Any, None]],
    ) -> None:
        self.conn, self.send = conn, send
        self.writer = DirectWriter(conn, send)
        self._on_gone = on_gone
        # Kept: asyncio.get_running_loop() is a getpid() system call each time (CPython checks
        # for a fork), and this is the path of every message.
        self._loop = asyncio.get_running_loop()
        # A list, not a deque: it holds a message or two, and an empty deque is a 64-slot block.
        self._inbox: list[tuple[bytes | str, float]] = []  # each message, and when it was read
        self._task: asyncio.Task[None] | None = None
        self._gone = False
        send.detach(self.received, self.closed)

    def received(self, frame: bytes | str) -> None:
        """The protocol read a message: take it now if idle, else after those waiting."""
        if self._gone:
            return
        self._inbox.append((frame, time.monotonic()))
        if self._task is None:
            self._task = self._loop.create_task(self._serve())
        elif len(self._inbox) >= INBOX_HIGH:
            self.send.pause_reading()

    def closed(self) -> None:
        """The connection is gone: nothing more is taken; the node forgets it once idle."""
        self._gone = True
        self._inbox.clear()
        if self._task is None:
            self._finish()

    async def _serve(self) -> None:
        conn, inbox = self.conn, self._inbox
        try:
            while inbox:
                await conn.on_frame(*inbox.pop(0))
        except Closing as e:
            inbox.clear()
            self.writer.flush()  # the answer that came before the close
            self.send.close(e.code, e.reason)
        except Exception:  # on_frame answers every command's error itself; this is a bug
            log.exception("connection %s failed; closing it", conn.id)
            inbox.clear()
            self.send.close(1011, "internal error")
        finally:
            self._task = None
            if self._gone:
                self._finish()
            else:
                self.send.resume_reading()

    def _finish(self) -> None:
        self.writer.stop()
        self._loop.create_task(self._on_gone(self.conn))
