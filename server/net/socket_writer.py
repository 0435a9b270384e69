"""One socket's writer: the frames waiting in its connection, to the wire.

Fan-out queues a table's events for a socket in one go, and a move's ``ok`` follows its own
events in the same step of the event loop. The writer is woken by the first frame that waits and
sends them all together once that step is done.

- ``DirectWriter``, on this server's own WebSocket protocol (``server.net.ws_protocol``): a
  callback, not a task. It writes everything waiting in one write; when the socket's buffer is full
  the
  frames keep waiting (and more join them) until the protocol says it has drained.
- ``TaskWriter``, on any other ASGI server: a task that sends each frame as an ASGI message.

A connection that falls ``OUTBOX_LIMIT`` frames behind (``Connection.dropped``) gets what was
queued, then a close with 1008.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from starlette.websockets import WebSocket, WebSocketDisconnect

from server.net.connection import Connection, no_writer
from server.net.extensions import DIRECT, DirectSocket
from server.ops import metrics

log = logging.getLogger(__name__)

DRAIN_SECONDS = 2.0  # the most a closing socket waits for its last frames to go


class DirectWriter:
    __slots__ = ("_loop", "_scheduled", "conn", "send")

    def __init__(self, conn: Connection, send: DirectSocket) -> None:
        self.conn, self.send = conn, send
        self._loop = asyncio.get_running_loop()
        self._scheduled = False
        conn.wake = self.wake
        send.on_writable = self.wake

    def wake(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)  # after the rest of this step has queued its frames

    def flush(self) -> None:
        self._scheduled = False
        conn = self.conn
        frames = conn.pending
        try:
            if frames:
                if not self.send.write(frames):
                    return  # the buffer is full: on_writable wakes us
                metrics.FRAMES_OUT.inc(len(frames))
                # Emptied, not replaced: write() keeps nothing of it, and a new list a socket
                # and card would be one more young object for the collector.
                frames.clear()
        except OSError:
            conn.pending = []  # the socket is gone; its reader sees that too
            return
        except Exception:
            # A frame that cannot be sent must not leave a silent socket that takes commands.
            log.exception("could not send to connection %s; closing it", conn.id)
            conn.closed = True
            conn.pending = []
            self.send.close(1011, "internal error")
            return
        if conn.dropped:
            self.send.close(1008, "too far behind")

    async def drain(self) -> None:
        """Send what waits now (a closing socket's last answer)."""
        self.flush()

    def stop(self) -> None:
        self.conn.wake = no_writer
        self.send.on_writable = None


class TaskWriter:
    def __init__(self, ws: WebSocket, conn: Connection) -> None:
        self.ws, self.conn = ws, conn
        self._waiting = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        conn.wake = self._waiting.set
        self._task = asyncio.create_task(self._run(), name=f"writer {conn.id}")

    async def _run(self) -> None:
        conn = self.conn
        try:
            while True:
                await self._waiting.wait()
                self._waiting.clear()
                self._idle.clear()
                frames, conn.pending = conn.pending, []
                for frame in frames:
                    if isinstance(frame, bytes):
                        await self.ws.send_bytes(frame)
                    else:
                        await self.ws.send_text(frame)
                metrics.FRAMES_OUT.inc(len(frames))
                if conn.dropped:
                    await _close(self.ws, 1008, "too far behind")
                    return
                if not conn.pending:
                    self._idle.set()
        except (WebSocketDisconnect, RuntimeError, OSError):
            return  # the socket is gone; the reader sees it too
        except Exception:
            log.exception("could not send to connection %s; closing it", conn.id)
            conn.closed = True
            await _close(self.ws, 1011, "internal error")
        finally:
            self._idle.set()

    async def drain(self) -> None:
        if self.conn.pending:
            self._idle.clear()
            self._waiting.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), DRAIN_SECONDS)

    def stop(self) -> None:
        self.conn.wake = no_writer
        self._task.cancel()


Writer = DirectWriter | TaskWriter


def start_writer(ws: WebSocket, conn: Connection) -> Writer:
    """The writer for this socket: direct on this server's protocol, else a task."""
    direct = ws.scope.get("extensions", {}).get(DIRECT)
    if direct is not None:
        return DirectWriter(conn, direct["send"])
    return TaskWriter(ws, conn)


async def _close(ws: WebSocket, code: int, reason: str) -> None:
    with contextlib.suppress(Exception):
        await ws.close(code=code, reason=reason)
