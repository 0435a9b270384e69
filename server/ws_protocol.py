"""uvicorn's sans-I/O WebSocket protocol, plus a direct send of many messages in one write.

A card played at a table sends each seat two or three messages (``card_played``, ``turn``, a
``your_turn``, the mover's ``ok``). Sent as ASGI messages, each is a coroutine call through
every middleware, then its own write to the socket. This protocol puts a ``DirectSend`` in the
scope's extensions (``DIRECT``): the app calls ``write(frames)`` from plain code (no task, no
await) and every frame goes out as its own WebSocket message, all in one write. Without
permessage-deflate (the default: msgpack frames are small) it frames them itself: an unmasked,
unfragmented frame is a two- to ten-byte header and the payload. When the socket's buffer is
full, ``write`` declines, and ``on_writable`` is called once it has drained.

It also hands the app the round trip of its WebSocket pings (``ROUND_TRIP``): every WebSocket
implementation answers a ping by itself, browsers included, so the clocks' lag credit needs no
ping of the app's own, and a socket costs one ping every interval, not two and an answer. The
first ping goes out soon after the handshake, so a new seat has its credit within seconds.
Once the handshake's response is sent, its request and response objects are let go.
Everything else is uvicorn's.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.http11 import Request
from websockets.protocol import OPEN

DIRECT = "hearts.websocket.direct_send"
ROUND_TRIP = "hearts.websocket.round_trip"
FIRST_PING = 2.0  # seconds after the handshake
TEXT, BINARY = 0x81, 0x82  # FIN and the opcode: the first byte of an unfragmented frame


@dataclass(slots=True)
class RoundTrip:
    """The last measured ping round trip of one socket, in seconds (0 until the first pong)."""

    seconds: float = 0.0


class DirectSend:
    """One socket's direct send, as the app sees it (``scope["extensions"][DIRECT]["send"]``)."""

    __slots__ = ("_protocol", "on_writable")

    def __init__(self, protocol: BatchingWebSocketProtocol) -> None:
        self._protocol = protocol
        self.on_writable: Callable[[], None] | None = None  # the buffer drained after a refusal

    def write(self, frames: Sequence[bytes | str]) -> bool:
        """Send ``frames`` now, in one write; False (nothing sent) while the buffer is full.

        Raises ``ClientDisconnected`` (an ``OSError``) once the socket is closing or closed.
        """
        return self._protocol.write_frames(frames)


class BatchingWebSocketProtocol(WebSocketsSansIOProtocol):
    round_trip: RoundTrip
    direct: DirectSend | None = None

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # absent when the handshake was refused
        if scope is not None:
            self.round_trip = RoundTrip()  # shared, not a callback: no cycle to the protocol
            self.direct = DirectSend(self)
            scope["extensions"][DIRECT] = {"send": self.direct}
            scope["extensions"][ROUND_TRIP] = {"round_trip": self.round_trip}

    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # The handshake's request and response (their header objects are about 3 KiB a
            # socket, tracemalloc) are not read again once the response is sent.
            self.request = self.response = None  # type: ignore[assignment]

    def start_keepalive(self) -> None:
        if self.ping_interval is not None and self.ping_interval > 0:
            delay = min(FIRST_PING, self.ping_interval)
            self.ping_timer = self.loop.call_later(delay, self.send_keepalive_ping)

    def handle_pong(self, event: Any) -> None:
        super().handle_pong(event)
        if self.pending_ping_payload is None and self.last_ping_rtt > 0:
            self.round_trip.seconds = self.last_ping_rtt

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.direct is not None and self.direct.on_writable is not None:
            self.direct.on_writable()

    def write_frames(self, frames: Sequence[bytes | str]) -> bool:
        if self.disconnected or self.close_sent or self.transport.is_closing():
            raise ClientDisconnected()
        if not self.handshake_complete:
            raise RuntimeError("a direct send before the handshake")
        if not self.writable.is_set():
            return False
        conn = self.conn
        if conn.extensions:  # permessage-deflate: websockets compresses each frame
            try:
                for frame in frames:
                    if isinstance(frame, bytes):
                        conn.send_binary(frame)
                    else:
                        conn.send_text(frame.encode())
            except InvalidState as e:
                raise ClientDisconnected() from e
            self.transport.write(b"".join(conn.data_to_send()))
            return True
        if conn.state is not OPEN:
            raise ClientDisconnected()
        # A server's frames are unmasked and ours are never fragmented, so a frame is a header
        # and its payload: framed here, without websockets' general path (a frame object, its
        # checks and serialization for each). Anything websockets has queued goes first.
        parts = conn.data_to_send()
        for frame in frames:
            payload = frame if isinstance(frame, bytes) else frame.encode()
            parts.append(_header(BINARY if isinstance(frame, bytes) else TEXT, len(payload)))
            parts.append(payload)
        self.transport.write(b"".join(parts))
        return True


def _header(first: int, length: int) -> bytes:
    """An unmasked frame's header (RFC 6455, 5.2): FIN and opcode, then the payload length."""
    if length < 126:
        return bytes((first, length))
    if length < 1 << 16:
        return struct.pack("!BBH", first, 126, length)
    return struct.pack("!BBQ", first, 127, length)
