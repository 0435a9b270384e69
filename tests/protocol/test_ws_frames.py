"""``protocol.ws_frames`` reads the common frames itself and hands the rest to websockets at a
frame boundary: for any stream of client frames (whole, fragmented, control, oversized,
unmasked, with extension bits), cut anywhere, reading the common ones and handing over the
rest yields exactly the events and the errors of websockets reading it all."""

from __future__ import annotations

import itertools
import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN
from websockets.server import ServerProtocol

from protocol import ws_frames

MAX = 4096
KINDS = frozenset((ws_frames.TEXT, ws_frames.BINARY, ws_frames.PONG))

PAYLOAD = st.one_of(st.binary(max_size=130), st.binary(min_size=MAX - 5, max_size=MAX + 5))
FRAME = st.one_of(
    st.tuples(st.sampled_from(["text", "binary", "pong"]), st.binary(max_size=200)),
    st.tuples(st.sampled_from(["binary"]), PAYLOAD),
    st.tuples(st.sampled_from(["ping", "close", "fragments", "unmasked", "rsv", "bad"]), PAYLOAD),
)


def encode(kind: str, payload: bytes) -> bytes:
    def masked(frame: Frame) -> bytes:
        return frame.serialize(mask=True, extensions=[])

    if kind == "text":
        return masked(Frame(Opcode.TEXT, payload.decode("latin-1").encode()))
    if kind in ("binary", "pong", "ping"):
        opcode = {"binary": Opcode.BINARY, "pong": Opcode.PONG, "ping": Opcode.PING}[kind]
        return masked(Frame(opcode, payload[:125] if kind != "binary" else payload))
    if kind == "close":
        return masked(Frame(Opcode.CLOSE, b"\x03\xe8"))
    if kind == "fragments":
        half = len(payload) // 2
        return masked(Frame(Opcode.BINARY, payload[:half], fin=False)) + masked(
            Frame(Opcode.CONT, payload[half:])
        )
    if kind == "unmasked":
        return Frame(Opcode.BINARY, payload[:100]).serialize(mask=False, extensions=[])
    if kind == "rsv":
        raw = bytearray(masked(Frame(Opcode.BINARY, payload[:100])))
        raw[0] |= 0x40
        return bytes(raw)
    raw = bytearray(masked(Frame(Opcode.BINARY, payload[:100])))
    raw[0] = (raw[0] & 0xF0) | 0x3  # a reserved opcode
    return bytes(raw)


def server() -> ServerProtocol:
    return ServerProtocol(state=OPEN, max_size=MAX)


def outcome(p: ServerProtocol, events: list[Any]) -> tuple[Any, ...]:
    for event in p.events_received():
        events.append((int(event.opcode), bytes(event.data), event.fin))
    sent = p.close_sent
    return (type(p.parser_exc).__name__, None if sent is None else sent.code)


def chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the given points (taken modulo its length), as a socket may read it."""
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=300, deadline=None)
@given(st.lists(FRAME, max_size=10), st.lists(st.integers(0, 10**6), max_size=6))
def test_reading_then_handing_over_is_reading_it_all(
    frames: list[tuple[str, bytes]], cuts: list[int]
) -> None:
    stream = b"".join(encode(kind, payload) for kind, payload in frames)
    ref, ref_events = server(), []
    for chunk in chunks(stream, cuts):
        ref.receive_data(chunk)
    expected = outcome(ref, ref_events)

    mine: list[Any] = []
    buf = bytearray()
    handed: ServerProtocol | None = None
    for chunk in chunks(stream, cuts):
        if handed is not None:
            handed.receive_data(chunk)
            continue
        buf += chunk
        read, used, rest = ws_frames.read_frames(buf, masked=True, max_size=MAX, kinds=KINDS)
        mine += [(opcode, payload, True) for opcode, payload in read]
        del buf[:used]
        if rest:
            handed = server()
            handed.receive_data(bytes(buf))
    got = outcome(handed, mine) if handed is not None else ("NoneType", None)
    assert mine == ref_events
    assert got == expected


def test_a_server_frame_must_not_be_masked_and_a_client_frame_must() -> None:
    payload = os.urandom(10)
    plain = bytearray(Frame(Opcode.BINARY, payload).serialize(mask=False, extensions=[]))
    masked = bytearray(Frame(Opcode.BINARY, payload).serialize(mask=True, extensions=[]))
    kinds = frozenset((ws_frames.BINARY,))
    assert ws_frames.read_frames(plain, masked=False, max_size=MAX, kinds=kinds) == (
        [(ws_frames.BINARY, payload)],
        len(plain),
        False,
    )
    assert ws_frames.read_frames(plain, masked=True, max_size=MAX, kinds=kinds) == ([], 0, True)
    assert ws_frames.read_frames(masked, masked=False, max_size=MAX, kinds=kinds) == ([], 0, True)
