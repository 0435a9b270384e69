"""A lean WebSocket client: websockets' sans-I/O protocol driven straight from an asyncio.Protocol.

``websockets.asyncio`` gives every connection a reader task, a message assembler and a
coroutine per send: at thousands of sockets in one generator process those wake-ups cost more
than the frames. Here each message received is handed to a callback inside ``data_received``
and each send is a plain call that writes to the transport, so a frame costs its parsing (and
inflating, with permessage-deflate) and nothing more. The WebSocket protocol itself (handshake,
masking, control frames, closing) is websockets' own ``ClientProtocol``.

Unless the server agreed to permessage-deflate (offering it is not enough: the server chooses
per subprotocol, and declines it for msgpack) the frames the server sends after the handshake
are read here, not
by websockets' parser (a generator and a frame object per frame, and the generators read four
sockets' frames for every card): an unfragmented
text or binary frame is a header and its payload, and a ping is answered through websockets'
``send_pong``. The first frame of any other kind (a close, a fragment, anything malformed) and
everything after it go to websockets, which then sees the stream from a frame boundary, as
if it had read it all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import cast

from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import enable_client_permessage_deflate
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import OPEN
from websockets.typing import Subprotocol
from websockets.uri import parse_uri

from protocol.ws_frames import BINARY, PING, TEXT, read_frames

CLOSE_WAIT = 2.0  # seconds to wait for the server's end of a closing handshake
READ = frozenset((TEXT, BINARY, PING))  # the server's frames read here, not by websockets

Deliver = Callable[[bytes | str], None]


class LeanSocket(asyncio.Protocol):
    def __init__(self, url: str, subprotocol: str, deflate: bool, max_size: int) -> None:
        self.ws = ClientProtocol(
            parse_uri(url),
            extensions=enable_client_permessage_deflate(None) if deflate else None,
            subprotocols=[Subprotocol(subprotocol)],
            max_size=max_size,
        )
        loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[int | None] = loop.create_future()
        self.transport: asyncio.Transport | None = None
        self.deliver: Deliver = lambda message: None  # set by the owner once open
        self.on_close: Callable[[int | None], None] = lambda code: None
        self._parts: list[bytes] = []
        self._text = False
        self._head = bytearray()  # the handshake response, until its end is seen
        self._fast: bytearray | None = None  # unread frame bytes, while frames are read here
        self._max_size = max_size

    @classmethod
    async def open(
        cls, url: str, subprotocol: str, *, deflate: bool, max_size: int, timeout: float
    ) -> LeanSocket:
        """Connected and upgraded, with ``subprotocol`` agreed; an exception otherwise."""
        uri = parse_uri(url)
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(timeout):
            transport, sock = await loop.create_connection(
                lambda: cls(url, subprotocol, deflate, max_size), uri.host, uri.port
            )
            try:
                await sock.opened
            except BaseException:
                transport.abort()
                raise
        if sock.ws.subprotocol != subprotocol:
            sock.abort()
            raise ConnectionError(f"the server did not agree to {subprotocol}")
        return sock

    @property
    def close_code(self) -> int | None:
        return self.ws.close_code

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's is not a subclass of asyncio.Transport).
        self.transport = cast(asyncio.Transport, transport)
        self.ws.send_request(self.ws.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        if self._fast is not None:
            self._fast += data
            self._read_frames()
            return
        if self.ws.state is not OPEN and self._head is not None:
            # Give websockets the response alone: the frames after it are read here.
            self._head += data
            end = self._head.find(b"\r\n\r\n")
            if end < 0:
                return
            head, rest = bytes(self._head[: end + 4]), bytes(self._head[end + 4 :])
            self._head = None  # type: ignore[assignment]
            self.ws.receive_data(head)
            self._events()
            if self.ws.state is OPEN and not self.ws.extensions:
                self._fast = bytearray(rest)
                self._read_frames()
            elif rest:
                self.ws.receive_data(rest)
                self._events()
            return
        self.ws.receive_data(data)
        self._events()

    def _read_frames(self) -> None:
        buf = self._fast
        assert buf is not None
        frames, used, rest = read_frames(buf, masked=False, max_size=self._max_size, kinds=READ)
        del buf[:used]
        for opcode, payload in frames:
            if self._fast is not buf:
                return  # the owner closed the socket meanwhile
            if opcode == PING:
                self.ws.send_pong(payload)
                self._frame(Frame(Opcode.PING, payload))
                self._flush()
            else:
                self.deliver(payload.decode() if opcode == TEXT else payload)
        if rest and self._fast is buf:
            # A close, a fragment, anything else: websockets' from here on.
            self._fast = None
            self.ws.receive_data(bytes(buf))
            self._events()

    def eof_received(self) -> bool | None:
        self.ws.receive_eof()
        self._events()
        return None  # let asyncio close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
        if not self.closed.done():
            self.closed.set_result(self.ws.close_code)
            self.on_close(self.ws.close_code)

    # -- frames ------------------------------------------------------------------------------

    def _events(self) -> None:
        for event in self.ws.events_received():
            if isinstance(event, Response):
                if self.ws.handshake_exc is not None:
                    self.opened.set_exception(self.ws.handshake_exc)
                elif not self.opened.done():
                    self.opened.set_result(None)
            elif isinstance(event, Frame):
                self._frame(event)
        self._flush()
        if self.ws.close_expected() and self.transport is not None:
            asyncio.get_running_loop().call_later(CLOSE_WAIT, self.abort)

    def _frame(self, frame: Frame) -> None:
        if frame.opcode is Opcode.TEXT or frame.opcode is Opcode.BINARY:
            self._text = frame.opcode is Opcode.TEXT
            self._parts = []
        elif frame.opcode is not Opcode.CONT:
            return  # ping, pong, close: the protocol answers them itself
        self._parts.append(bytes(frame.data))
        if frame.fin:
            data = b"".join(self._parts)
            self._parts = []
            self.deliver(data.decode() if self._text else data)

    def _flush(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        for data in self.ws.data_to_send():
            if data:
                self.transport.write(data)
            elif self.transport.can_write_eof():
                self.transport.write_eof()

    # -- the owner's side --------------------------------------------------------------------

    def send(self, message: bytes | str) -> bool:
        """Write one message now; False if the socket is no longer open."""
        if self.ws.state is not OPEN:
            return False
        if isinstance(message, str):
            self.ws.send_text(message.encode())
        else:
            self.ws.send_binary(message)
        self._flush()
        return True

    async def close(self) -> None:
        if self.ws.state is OPEN:
            self.ws.send_close(1000)
            self._flush()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.closed), CLOSE_WAIT)
        self.abort()

    def abort(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()
