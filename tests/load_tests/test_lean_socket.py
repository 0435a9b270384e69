"""The load generator's socket (``load_tests.lean_socket``) reads the server's frames itself
after the handshake: for any stream of frames, cut anywhere, it delivers the same messages and
answers the same pings as websockets' own client protocol reading the same bytes."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.typing import Subprotocol
from websockets.uri import parse_uri

from load_tests.lean_socket import LeanSocket
from tests.protocol.test_ws_frames import chunks

URL = "ws://127.0.0.1:1/ws"
PROTOCOL = "hearts.v1.msgpack"
GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return False

    def can_write_eof(self) -> bool:
        return False

    def abort(self) -> None:
        pass


def response(request: bytes, extensions: str = "") -> bytes:
    key = next(
        line.split(b":", 1)[1].strip()
        for line in request.split(b"\r\n")
        if line.lower().startswith(b"sec-websocket-key:")
    )
    accept = base64.b64encode(hashlib.sha1(key + GUID.encode()).digest()).decode()
    return (
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {PROTOCOL}\r\n"
        + (f"Sec-WebSocket-Extensions: {extensions}\r\n" if extensions else "")
        + "\r\n"
    ).encode()


FRAMES = st.one_of(
    st.tuples(st.just(Opcode.BINARY), st.binary(max_size=300), st.just(True)),
    st.tuples(st.just(Opcode.TEXT), st.text(max_size=100).map(str.encode), st.just(True)),
    st.tuples(st.just(Opcode.BINARY), st.binary(min_size=126, max_size=70_000), st.just(True)),
    st.tuples(st.just(Opcode.PING), st.binary(max_size=20), st.just(True)),
    # A message in two fragments: handed to websockets from there on.
    st.tuples(st.just(Opcode.TEXT), st.text(max_size=20).map(str.encode), st.just(False)),
)


def serialized(frames: list[tuple[Opcode, bytes, bool]]) -> bytes:
    out = b""
    for opcode, payload, fin in frames:
        if fin:
            out += Frame(opcode, payload).serialize(mask=False, extensions=[])
        else:
            half = len(payload) // 2
            out += Frame(opcode, payload[:half], fin=False).serialize(mask=False, extensions=[])
            out += Frame(Opcode.CONT, payload[half:]).serialize(mask=False, extensions=[])
    return out


def reference(stream: bytes, cuts: list[int]) -> tuple[list[Any], list[bytes]]:
    """What websockets' client delivers (whole messages) and answers (pongs)."""
    ws = ClientProtocol(parse_uri(URL), subprotocols=[Subprotocol(PROTOCOL)], max_size=2**20)
    request = ws.connect()
    ws.send_request(request)
    ws.data_to_send()
    head = response(request.serialize())
    delivered: list[Any] = []
    pongs: list[bytes] = []
    parts: list[bytes] = []
    for chunk in chunks(head + stream, cuts):
        ws.receive_data(chunk)
        for event in ws.events_received():
            if isinstance(event, Frame):
                if event.opcode is Opcode.PING:
                    pongs.append(bytes(event.data))
                elif event.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
                    if event.opcode is not Opcode.CONT:
                        parts, text = [], event.opcode is Opcode.TEXT
                    parts.append(bytes(event.data))
                    if event.fin:
                        data = b"".join(parts)
                        delivered.append(data.decode() if text else data)
    return delivered, pongs


@settings(max_examples=120, deadline=None)
@given(st.lists(FRAMES, max_size=12), st.lists(st.integers(0, 10**6), max_size=8), st.booleans())
def test_the_fast_read_is_websockets_read(
    frames: list[tuple[Opcode, bytes, bool]], cuts: list[int], offer_deflate: bool
) -> None:
    """Whether or not the client offered permessage-deflate: the server declined it."""
    stream = serialized(frames)
    expected, expected_pongs = reference(stream, cuts)

    async def run() -> tuple[list[Any], list[bytes]]:
        sock = LeanSocket(URL, PROTOCOL, deflate=offer_deflate, max_size=2**20)
        got: list[Any] = []
        sock.deliver = got.append
        transport = Transport()
        sock.connection_made(transport)  # type: ignore[arg-type]
        request = b"".join(transport.written)
        transport.written.clear()
        for chunk in chunks(response(request) + stream, cuts):
            sock.data_received(chunk)
        return got, transport.written

    got, written = asyncio.run(run())
    assert got == expected
    # One pong written per ping, with its payload (masked on the wire: header, mask, payload).
    assert len(written) == len(expected_pongs)
    for data, payload in zip(written, expected_pongs, strict=True):
        assert len(data) == 2 + 4 + len(payload)


def test_frames_are_read_here_unless_the_server_agreed_to_compression() -> None:
    """Offering permessage-deflate is not enough to hand reading to websockets: the server
    chooses per subprotocol. Agreed, compressed frames are websockets' to inflate."""
    from websockets.extensions.permessage_deflate import PerMessageDeflate

    def opened(extensions: str) -> tuple[LeanSocket, Transport]:
        sock = LeanSocket(URL, PROTOCOL, deflate=True, max_size=2**20)
        transport = Transport()
        sock.connection_made(transport)  # type: ignore[arg-type]
        request = b"".join(transport.written)
        sock.data_received(response(request, extensions))
        return sock, transport

    async def run() -> None:
        declined, _ = opened("")
        assert declined.ws.extensions == [] and declined._fast is not None

        agreed, _ = opened("permessage-deflate; server_no_context_takeover")
        assert agreed.ws.extensions and agreed._fast is None
        got: list[Any] = []
        agreed.deliver = got.append
        deflate = PerMessageDeflate(False, True, 15, 15)  # the server's side of it
        frame = Frame(Opcode.BINARY, b"hearts " * 50)
        agreed.data_received(frame.serialize(mask=False, extensions=[deflate]))
        assert got == [b"hearts " * 50]

    asyncio.run(run())
