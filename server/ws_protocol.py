"""uvicorn's sans-I/O WebSocket protocol, plus one write for a batch of messages.

A card played at a table sends each seat two or three messages (``card_played``, ``turn``, a
``your_turn``, the mover's ``ok``). Sent one ASGI message at a time, each is its own write to
the socket, and on loopback a write is the most expensive thing a node does (a py-spy profile of
the paced load put 31 % of the node in ``transport.write`` and the loop's own send path). This
protocol advertises the ASGI extension ``BATCH`` in the scope; the app sends
``{"type": BATCH, "frames": [...]}`` and every frame goes out as its own WebSocket message, all
in one write.

It also hands the app the round trip of its WebSocket pings (``ROUND_TRIP``): every WebSocket
implementation answers a ping by itself, browsers included, so the clocks' lag credit needs no
ping of the app's own, and a socket costs one ping every interval, not two and an answer. The
first ping goes out soon after the handshake, so a new seat has its credit within seconds.
Everything else is uvicorn's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.http11 import Request

BATCH = "hearts.websocket.send_batch"
ROUND_TRIP = "hearts.websocket.round_trip"
FIRST_PING = 2.0  # seconds after the handshake


@dataclass(slots=True)
class RoundTrip:
    """The last measured ping round trip of one socket, in seconds (0 until the first pong)."""

    seconds: float = 0.0


class BatchingWebSocketProtocol(WebSocketsSansIOProtocol):
    round_trip: RoundTrip

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # absent when the handshake was refused
        if scope is not None:
            self.round_trip = RoundTrip()  # shared, not a callback: no cycle to the protocol
            scope["extensions"][BATCH] = {}
            scope["extensions"][ROUND_TRIP] = {"round_trip": self.round_trip}

    def start_keepalive(self) -> None:
        if self.ping_interval is not None and self.ping_interval > 0:
            delay = min(FIRST_PING, self.ping_interval)
            self.ping_timer = self.loop.call_later(delay, self.send_keepalive_ping)

    def handle_pong(self, event: Any) -> None:
        super().handle_pong(event)
        if self.pending_ping_payload is None and self.last_ping_rtt > 0:
            self.round_trip.seconds = self.last_ping_rtt

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
