"""uvicorn's sans-I/O WebSocket protocol, plus one write for a batch of messages.

A card played at a table sends each seat two or three messages (``card_played``, ``turn``, a
``your_turn``, the mover's ``ok``). Sent one ASGI message at a time, each is its own write to
the socket, and on loopback a write is the most expensive thing a node does (a py-spy profile of
the paced load put 31 % of the node in ``transport.write`` and the loop's own send path). This
protocol advertises the ASGI extension ``BATCH`` in the scope; the app sends
``{"type": BATCH, "frames": [...]}`` and every frame goes out as its own WebSocket message, all
in one write. Everything else is uvicorn's.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.http11 import Request

BATCH = "hearts.websocket.send_batch"


class BatchingWebSocketProtocol(WebSocketsSansIOProtocol):
    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # absent when the handshake was refused
        if scope is not None:
            scope["extensions"][BATCH] = {}

    async def send(self, message: Any) -> None:
        if message["type"] != BATCH:
            await super().send(message)
            return
        await self.writable.wait()
        if self.disconnected:
            raise ClientDisconnected()
        if not self.handshake_complete or self.close_sent:
            raise RuntimeError(f"'{BATCH}' before the handshake or after the close.")
        try:
            for frame in message["frames"]:
                if isinstance(frame, bytes):
                    self.conn.send_binary(frame)
                else:
                    self.conn.send_text(frame.encode())
        except InvalidState as e:
            raise ClientDisconnected() from e
        self.transport.write(b"".join(self.conn.data_to_send()))
