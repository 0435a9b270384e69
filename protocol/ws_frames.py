"""Reading the common WebSocket frames without websockets' parser (sans-I/O, RFC 6455 5.2).

websockets parses each frame with a generator and builds a ``Frame`` object: per message, the
largest cost of reading a socket, on the node (a card's play) and even more in the load
generators (every seat's events). Nearly every frame after the handshake is of one kind: whole
(FIN), no extension bits, text, binary or a pong (a ping, towards a client). ``read_frames``
takes those straight off the buffer and stops at the first frame of any other kind (a close, a
fragment, a ping from a client, a frame too large, a bad mask bit), which the caller then hands,
with everything after it, to websockets: its parser is at a frame boundary, as if it had read
the whole stream, and it answers such frames as it always did.
"""

from __future__ import annotations

try:
    from websockets.speedups import apply_mask
except ImportError:  # websockets built without its C extension
    from websockets.utils import apply_mask

TEXT, BINARY, PING, PONG = 0x1, 0x2, 0x9, 0xA
CONTROL_MAX = 125  # RFC 6455 5.5: a control frame's payload


def read_frames(
    buf: bytearray, *, masked: bool, max_size: int, kinds: frozenset[int]
) -> tuple[list[tuple[int, bytes]], int, bool]:
    """The whole frames at the start of ``buf`` whose opcode is in ``kinds``.

    ``masked``: frames from a client (each must carry a mask, RFC 6455 5.1); from a server none
    may. Returns the frames as (opcode, payload) pairs, how many bytes of ``buf`` they took,
    and whether the frame after them is not one of these (the rest is websockets').
    """
    frames: list[tuple[int, bytes]] = []
    start, end = 0, len(buf)
    mask_bit = 0x80 if masked else 0
    while end - start >= 2:
        first, second = buf[start], buf[start + 1]
        opcode = first & 0x0F
        length = second & 0x7F
        at = start + 2
        if first & 0xF0 != 0x80 or second & 0x80 != mask_bit or opcode not in kinds:
            return frames, start, True
        if length == 126:
            if end - at < 2:
                break
            length = int.from_bytes(buf[at : at + 2], "big")
            at += 2
        elif length == 127:
            if end - at < 8:
                break
            length = int.from_bytes(buf[at : at + 8], "big")
            at += 8
        if length > (CONTROL_MAX if opcode >= 0x8 else max_size):
            return frames, start, True
        payload_at = at + 4 if masked else at
        if end - payload_at < length:
            break
        payload = bytes(buf[payload_at : payload_at + length])
        if masked:
            payload = apply_mask(payload, bytes(buf[at:payload_at]))
        frames.append((opcode, payload))
        start = payload_at + length
    return frames, start, False
