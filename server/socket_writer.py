"""One socket's writer: the connection's outbox to the wire, as many frames per write as wait.

Fan-out queues a table's events for a socket in one go, and a move's ``ok`` follows its own
events: the writer takes everything that is waiting and, where the server offers it
(``server.ws_protocol``), sends it all in one write to the socket.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from server.connection import Connection
from server.ws_protocol import BATCH

log = logging.getLogger(__name__)

MAX_BATCH = 64  # frames per write: a client far behind still gets its frames in steps

Send = Callable[[Sequence[bytes | str]], Awaitable[None]]


def batch_sender(ws: WebSocket) -> Send:
    """How this socket sends a list of frames: one write if the server can, else one each."""
    if BATCH in ws.scope.get("extensions", {}):
        # Starlette's own send refuses a message type it does not know: the ASGI send under it.
        asgi_send: Callable[[dict[str, Any]], Awaitable[None]] = ws._send

        async def send_batch(frames: Sequence[bytes | str]) -> None:
            await asgi_send({"type": BATCH, "frames": frames})

        return send_batch

    async def send_each(frames: Sequence[bytes | str]) -> None:
        for frame in frames:
            if isinstance(frame, bytes):
                await ws.send_bytes(frame)
            else:
                await ws.send_text(frame)

    return send_each


async def run_writer(ws: WebSocket, conn: Connection) -> None:
    """Send the outbox until its end (``None``); a closed connection's rest is drained first."""
    send = batch_sender(ws)
    outbox = conn.outbox
    try:
        while True:
            batch = [await outbox.get()]
            while len(batch) < MAX_BATCH and not outbox.empty():
                batch.append(outbox.get_nowait())
            frames: list[bytes | str] = []
            for k, frame in enumerate(batch):
                if frame is not None:
                    frames.append(frame)
                    continue
                if conn.closed and (k + 1 < len(batch) or not outbox.empty()):
                    continue  # dropped for falling behind: what is queued still goes out
                if frames:
                    await send(frames)
                if conn.closed:
                    with contextlib.suppress(Exception):
                        await ws.close(code=1008, reason="too far behind")
                return
            await send(frames)
    except (WebSocketDisconnect, RuntimeError, OSError):
        return  # the socket is gone; the reader sees it too
    except Exception:
        # A frame that cannot be sent must not leave a silent socket that still takes commands.
        log.exception("could not send to connection %s; closing it", conn.id)
        conn.closed = True
        with contextlib.suppress(Exception):
            await ws.close(code=1011, reason="internal error")
