"""The batch send's own framing (server/net/ws_protocol.py) is byte for byte websockets' framing of
the same unmasked, unfragmented frame, at every length class of RFC 6455's header."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode

from server.net.ws_protocol import BINARY_FIN, TEXT_FIN, _header

EDGES = [0, 1, 125, 126, 127, 65535, 65536, 70_000]


def websockets_frame(opcode: Opcode, payload: bytes) -> bytes:
    return Frame(opcode, payload).serialize(mask=False, extensions=[])


def test_every_length_class() -> None:
    for n in EDGES:
        payload = bytes(range(256)) * (n // 256) + bytes(n % 256)
        assert _header(BINARY_FIN, n) + payload == websockets_frame(Opcode.BINARY, payload)
        assert _header(TEXT_FIN, n) + payload == websockets_frame(Opcode.TEXT, payload)


@given(st.binary(max_size=70_000))
def test_any_binary_payload(payload: bytes) -> None:
    assert _header(BINARY_FIN, len(payload)) + payload == websockets_frame(Opcode.BINARY, payload)


@given(st.text(max_size=300))
def test_any_text_payload(text: str) -> None:
    payload = text.encode()
    assert _header(TEXT_FIN, len(payload)) + payload == websockets_frame(Opcode.TEXT, payload)
