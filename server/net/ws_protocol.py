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

After the accept, the app may ``detach`` the socket: from then on every message goes straight
to the app's ``on_message`` callback, in the call that read it, and connection loss to
``on_closed``; the ASGI coroutine returns without closing the socket. A detached socket holds no
ASGI task, scope, queue reads or middleware frames (a per-socket cost in memory), and a message
reaches the app without the queue, the ``receive`` chain through every middleware and the
pause and resume of reading that uvicorn does for each one. The app then paces reading itself
(``pause_reading``, ``resume_reading``) and closes with ``close``. A detached socket without
permessage-deflate also reads its frames itself (``protocol.ws_frames``: whole text and binary
frames and pongs); the first frame of any other kind, and all after it, go to websockets.
websockets' parser is given one correction (``_ServerProtocol``): a close frame between a
message's fragments is answered with a close, as RFC 6455 asks, not failed with 1002.
Everything else is uvicorn's.
"""

from __future__ import annotations

import logging
import random
import struct
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import OPEN
from websockets.server import ServerProtocol

from protocol import ws_frames
from server.net.extensions import DIRECT, ROUND_TRIP, RoundTrip

FIRST_PING = 2.0  # seconds after the handshake
# A keepalive ping falls due this share of the interval early (2 s of 20) and goes out with the
# next frames the socket is sent, alone when the time is up. Sent alone, a ping is a write of
# its own, and it wakes an idle peer.
PING_RIDE = 0.1
# FIN and the opcode: the first byte of an unfragmented frame (ws_frames.TEXT is the opcode alone)
TEXT_FIN, BINARY_FIN = 0x81, 0x82
# The headers of data frames under 126 bytes: most of a card's frames (about eleven a card).
_SHORT = {first: tuple(bytes((first, n)) for n in range(126)) for first in (TEXT_FIN, BINARY_FIN)}
PING_HEADER = bytes((0x89, 4))  # FIN, ping; an unmasked four-byte payload
CLOSE_TIMEOUT = 10.0  # seconds a closing socket waits for the peer's close frame
# Read here once detached: data frames and pongs (protocol.ws_frames).
CLIENT_FRAMES = frozenset((ws_frames.TEXT, ws_frames.BINARY, ws_frames.PONG))

log = logging.getLogger(__name__)


class DirectSend:
    """One socket's direct send, as the app sees it (``scope["extensions"][DIRECT]["send"]``).

    It holds its protocol by a weak reference: the protocol holds it too, and a strong pair
    would be a reference cycle, so a closed socket's objects would wait for the cyclic garbage
    collector, whose pauses stall every table (see ``connection_lost``). The transport holds
    the protocol while the socket is open.
    """

    __slots__ = ("_protocol", "on_closed", "on_message", "on_writable")

    def __init__(self, protocol: BatchingWebSocketProtocol) -> None:
        self._protocol = weakref.ref(protocol)
        self.on_writable: Callable[[], None] | None = None  # the buffer drained after a refusal
        self.on_message: Callable[[bytes | str], None] | None = None  # set by ``detach``
        self.on_closed: Callable[[], None] | None = None

    def write(self, frames: Sequence[bytes | str]) -> bool:
        """Send ``frames`` now, in one write; False (nothing sent) while the buffer is full.

        Raises ``ClientDisconnected`` (an ``OSError``) once the socket is closing or closed.
        """
        protocol = self._protocol()
        if protocol is None:
            raise ClientDisconnected()
        return protocol.write_frames(frames)

    def detach(
        self, on_message: Callable[[bytes | str], None], on_closed: Callable[[], None]
    ) -> None:
        """Hand the accepted socket to the app's callbacks; its ASGI coroutine may return.

        ``on_message`` gets each message (str for text, bytes for binary) as it is read;
        ``on_closed`` is called once when the connection is gone, however it ended.
        """
        self.on_message, self.on_closed = on_message, on_closed
        protocol = self._protocol()
        if protocol is None:
            raise ClientDisconnected()
        protocol.detach()

    def close(self, code: int, reason: str = "") -> None:
        """Start the closing handshake (no-op once closing); the peer has CLOSE_TIMEOUT s."""
        protocol = self._protocol()
        if protocol is not None:
            protocol.close_socket(code, reason)

    def pause_reading(self) -> None:
        protocol = self._protocol()
        if protocol is not None:
            protocol.pause_socket_reading()

    def resume_reading(self) -> None:
        protocol = self._protocol()
        if protocol is not None:
            protocol.resume_socket_reading()


class _ServerProtocol(ServerProtocol):
    """websockets' server side, but a close between a message's fragments closes cleanly."""

    def recv_frame(self, frame: Frame) -> None:
        if frame.opcode is Opcode.CLOSE:
            # RFC 6455 5.4: control frames may come between a message's fragments, and 5.5.1:
            # a close is answered with a close. websockets fails the connection instead (1002
            # "incomplete fragmented message"); the unfinished message is dropped.
            self.current_size = None
        super().recv_frame(frame)


class BatchingWebSocketProtocol(WebSocketsSansIOProtocol):
    round_trip: RoundTrip
    direct: DirectSend | None = None
    detached = False
    _app_paused = False
    _ping_riding = False  # a keepalive ping is due: the next write of frames takes it along
    # Frames read here (protocol.ws_frames) once detached: the bytes not yet read, or None while
    # websockets reads them. ``_before`` is what came before the accept, to tell that the
    # handshake's request was all of it.
    _fast: bytearray | None = None
    _before: bytearray | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # uvicorn builds websockets' protocol; its class is swapped rather than the object
        # rebuilt here with a copy of uvicorn's arguments.
        self.conn.__class__ = _ServerProtocol

    def data_received(self, data: bytes) -> None:
        fast = self._fast
        if fast is not None:
            fast += data
            self._read_fast()
            return
        if not self.detached:
            before = self._before
            if before is None:
                before = self._before = bytearray()
            if len(before) <= 65536:
                before += data
        super().data_received(data)

    def _max_size(self) -> int:
        size = self.conn.max_message_size
        return size if size is not None else 1 << 63

    def _read_fast(self) -> None:
        buf = self._fast
        assert buf is not None
        while buf and not self._app_paused:
            frames, used, rest = ws_frames.read_frames(
                buf, masked=True, max_size=self._max_size(), kinds=CLIENT_FRAMES
            )
            del buf[:used]
            for opcode, payload in frames:
                if self._fast is not buf:
                    return
                if opcode == ws_frames.PONG:
                    self.handle_pong(Frame(Opcode.PONG, payload))
                else:
                    self.curr_msg_data_type = "text" if opcode == ws_frames.TEXT else "bytes"
                    self.frames = [payload]
                    self.send_receive_event_to_app()
            if rest and self._fast is buf:
                # A close, a fragment, a ping, a frame too large or malformed: websockets'
                # from here on, from this frame's first byte.
                self._fast = None
                super().data_received(bytes(buf))
                return
            if not frames:
                return  # a partial frame: wait for the rest

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
            # socket) are not read again once the response is sent.
            self.request = self.response = None  # type: ignore[assignment]

    async def run_asgi(self) -> None:
        """uvicorn's, but for the end: a detached socket stays open when the app returns."""
        try:
            result = await self.app(self.scope, self.receive, self.send)
        except ClientDisconnected:
            pass
        except BaseException:
            self.logger.exception("Exception in ASGI application\n")
            self.send_500_response()
        else:
            if not self.handshake_complete:
                self.logger.error("ASGI callable returned without completing handshake.")
                self.send_500_response()
            elif result is not None:
                self.logger.error("ASGI callable should return None, but returned %r.", result)
        if self.detached:
            self.scope = None  # type: ignore[assignment]  # headers and state: not read again
            if self.disconnected:
                self._closed_detached()  # lost before the app detached
            return
        if self.close_timer is None:
            self.transport.close()

    def detach(self) -> None:
        self.detached = True
        # Anything queued for the ASGI app before it detached goes to the callback, in order.
        while not self.queue.empty():
            message: Any = self.queue.get_nowait()
            on_message = self.direct.on_message if self.direct is not None else None
            if message["type"] == "websocket.receive" and on_message is not None:
                text = message.get("text")
                on_message(text if text is not None else message.get("bytes") or b"")
        if self.read_paused:
            self.read_paused = False
            self.transport.resume_reading()
        # Nobody reads the ASGI queue from now on (four deques: about 2 KiB a socket).
        self.queue = _DISCARD  # type: ignore[assignment]
        # Read frames here, if websockets has read nothing past the request: its parser then
        # waits at the first frame's first byte (a client may not send before the response).
        before, self._before = self._before, None
        end = -1 if before is None else before.find(b"\r\n\r\n")
        if (
            before is not None
            and end + 4 == len(before)
            and not self.conn.extensions
            and self.conn.state is OPEN
            and not self.close_sent
        ):
            self._fast = bytearray()

    def send_receive_event_to_app(self) -> None:
        on_message = self.direct.on_message if self.direct is not None else None
        if on_message is None:
            super().send_receive_event_to_app()
            return
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        if self.close_sent:
            return  # past our close: discard, as uvicorn does
        if self.curr_msg_data_type == "text":
            try:
                text = data.decode()
            except UnicodeDecodeError:
                self.close_socket(1007, "invalid UTF-8")
                return
            on_message(text)
        else:
            on_message(data)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.detached and self.scope is None:
            self._closed_detached()
        # websockets' parser is a generator that refers to its protocol: a cycle. Nothing is
        # read any more, so it is closed, and the socket's objects are freed by reference
        # counting when the app lets go of them, not by a cyclic collection (a closed socket
        # left about 45 objects in cycles: every one of them is work in a collector's pause).
        parser = getattr(self.conn, "parser", None)
        if parser is not None:
            parser.close()

    def _closed_detached(self) -> None:
        direct = self.direct
        if direct is not None and direct.on_closed is not None:
            on_closed, direct.on_closed = direct.on_closed, None
            direct.on_message = direct.on_writable = None
            try:
                on_closed()
            except Exception:
                log.exception("a detached socket's close callback failed")

    def close_socket(self, code: int, reason: str) -> None:
        if self.close_sent or self.disconnected or self.transport.is_closing():
            return
        try:
            self.conn.send_close(code, reason)
        except InvalidState:
            return
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        fast, self._fast = self._fast, None
        if fast:
            super().data_received(bytes(fast))  # websockets reads on, to the peer's close
        self.resume_socket_reading()  # read on until the peer's close frame comes
        self.close_timer = self.loop.call_later(CLOSE_TIMEOUT, self.transport.close)

    def pause_socket_reading(self) -> None:
        if not self._app_paused and not self.transport.is_closing():
            self._app_paused = True
            self.transport.pause_reading()

    def resume_socket_reading(self) -> None:
        if self._app_paused:
            self._app_paused = False
            if not self.transport.is_closing():
                self.transport.resume_reading()
            if self._fast:
                self._read_fast()  # frames read before the pause and not yet taken

    def start_keepalive(self) -> None:
        if self.ping_interval is not None and self.ping_interval > 0:
            delay = min(FIRST_PING, self.ping_interval)
            self.ping_timer = self.loop.call_later(delay, self.send_keepalive_ping)

    def schedule_ping(self) -> None:
        """The next ping falls due a little early (``PING_RIDE``), to ride on a write of frames."""
        assert self.ping_interval is not None
        ride = self.ping_interval * PING_RIDE
        delay = max(0.0, self.ping_interval - self.last_ping_rtt - ride)
        self.ping_timer = self.loop.call_later(delay, self._ping_due, ride)

    def _ping_due(self, ride: float) -> None:
        if self._fast is None or self.conn.state is not OPEN:
            self.send_keepalive_ping()  # websockets' path: no frames of ours to ride on
            return
        self._ping_riding = True
        self.ping_timer = self.loop.call_later(ride, self.send_keepalive_ping)

    def stop_keepalive(self) -> None:
        super().stop_keepalive()
        self._ping_riding = False

    def send_keepalive_ping(self) -> None:
        """uvicorn's ping, framed here on a socket that reads its own frames: websockets'
        general path (a frame object, its checks and serialization) was most of a ping's
        cost, and a node sends one per socket every ``ping_interval``."""
        self._ping_riding = False
        if self._fast is None or self.conn.state is not OPEN:
            super().send_keepalive_ping()
            return
        self.ping_timer = None
        if self.close_sent or self.transport.is_closing():
            return
        queued = self.conn.data_to_send() if self.conn.writes else []  # anything queued first
        self._add_ping(queued)
        self.transport.write(b"".join(queued))

    def _add_ping(self, parts: list[bytes]) -> None:
        """Append a ping frame to ``parts``, about to be written, and wait for its pong."""
        # A random payload, as uvicorn's: ``handle_pong`` ignores a pong that does not match.
        # It tells pings apart and guards nothing, so it comes from ``random``, not from a
        # ``getrandom`` system call per ping as ``secrets`` does.
        payload = self.pending_ping_payload = random.randbytes(4)
        self.ping_sent_at = self.loop.time()
        parts.append(PING_HEADER)
        parts.append(payload)
        if self.ping_timeout is not None:
            self.pong_timer = self.loop.call_later(self.ping_timeout, self.keepalive_timeout)
        else:
            self.schedule_ping()

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
        # data_to_send() leaves a new list in websockets for every call: one young object per
        # socket and card for the collector (server/ops/gc_pacing.py), so it is asked only when it
        # holds something.
        parts = conn.data_to_send() if conn.writes else []
        short_binary = _SHORT[BINARY_FIN]
        for frame in frames:  # about 11 frames a card over the four sockets: kept to a minimum
            if isinstance(frame, bytes):
                n = len(frame)
                parts.append(short_binary[n] if n < 126 else _header(BINARY_FIN, n))
                parts.append(frame)
            else:
                payload = frame.encode()
                parts.append(_header(TEXT_FIN, len(payload)))
                parts.append(payload)
        if self._ping_riding:  # a due ping goes with these frames, not in a write of its own
            self._ping_riding = False
            if self.ping_timer is not None:
                self.ping_timer.cancel()
                self.ping_timer = None
            self._add_ping(parts)
        self.transport.write(b"".join(parts))
        return True


class _Discarded:
    """A detached socket's ASGI receive queue: what uvicorn still puts there is dropped."""

    def put_nowait(self, message: object) -> None:
        pass

    def empty(self) -> bool:
        return True


_DISCARD = _Discarded()


def _header(first: int, length: int) -> bytes:
    """An unmasked frame's header (RFC 6455, 5.2): FIN and opcode, then the payload length."""
    if length < 126:
        return _SHORT[first][length]
    if length < 1 << 16:
        return struct.pack("!BBH", first, 126, length)
    return struct.pack("!BBQ", first, 127, length)
