"""RFC 6455 conformance of the server's WebSocket framing, in cases modelled on the Autobahn
test suite's, through a raw socket (no WebSocket library on this side).

    python -m load_tests.ws_conformance                          # a node of its own
    python -m load_tests.ws_conformance --url ws://127.0.0.1:8000/ws   # a running node (loopback)

Autobahn's cases expect an echo server; the server here answers every whole message (a
``ping`` command, in the JSON subprotocol) with one ``ok`` or ``error`` frame, so a case's
messages are such commands and "echoed" reads "answered". Each case sends its frames, in one
write or in several, on a fresh socket that the server has detached (its own frame reader, not
websockets', server/net/ws_protocol.py), and expects answers, pongs and a close (its code, or the
connection dropped) in order. The report's lines are ``name: value``; the last two are
``cases: N`` and ``failed: N``; every failed case is listed with what came instead.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlparse

from load_tests.cluster import Cluster, endpoint_for, require_loopback
from protocol import ws_frames

TEXT, BINARY, CONT, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA
ALL_OPCODES = frozenset(range(16))
READ_WAIT = 5.0
SETTLE = 0.3  # after the handshake: the server detaches the socket (its ASGI coroutine returns)


def frame(opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0) -> bytes:
    """A masked client frame (RFC 6455 5.2), any opcode and bits, for good or ill."""
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    n = len(payload)
    if n < 126:
        header = struct.pack("!BB", first, 0x80 | n)
    elif n < 1 << 16:
        header = struct.pack("!BBH", first, 0x80 | 126, n)
    else:
        header = struct.pack("!BBQ", first, 0x80 | 127, n)
    mask = os.urandom(4)
    return header + mask + bytes(b ^ mask[k % 4] for k, b in enumerate(payload))


def close_payload(code: int, reason: bytes = b"") -> bytes:
    return struct.pack("!H", code) + reason


def command(n: int, pad: int = 0) -> bytes:
    """A ``ping`` command that is ``pad`` bytes longer than the bare one: an answer is due."""
    return json.dumps({"type": "ping", "id": n, "t": 1.0}).encode() + b" " * pad


@dataclass
class Seen:
    answers: int = 0
    pongs: list[bytes] = field(default_factory=list)
    close: int | None = None  # the server's close code (1005: a close without one)
    dropped: bool = False  # the connection ended


class RawSocket:
    """One client connection, by hand: the handshake, raw bytes out, the server's frames in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.buf = bytearray()
        self.seen = Seen()

    @classmethod
    async def open(cls, url: str, subprotocol: str = "hearts.v1.json") -> RawSocket:
        parts = urlparse(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Sec-WebSocket-Protocol: {subprotocol}\r\n\r\n"
            ).encode()
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_WAIT)
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(f"handshake refused: {head[:60]!r}")
        sock = cls(reader, writer)
        await asyncio.sleep(SETTLE)
        return sock

    async def send(self, *chunks: bytes, gap: float = 0.0) -> None:
        """Each chunk in a write of its own, ``gap`` seconds apart (0: together)."""
        for k, chunk in enumerate(chunks):
            if gap and k:
                await asyncio.sleep(gap)
            self.writer.write(chunk)
            await self.writer.drain()

    async def until(self, done: Callable[[Seen], bool], wait: float = READ_WAIT) -> Seen:
        """Read the server's frames until ``done`` or the connection ends (or ``wait`` s)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        seen = self.seen
        while not done(seen) and not seen.dropped:
            left = deadline - loop.time()
            if left <= 0:
                break
            try:
                data = await asyncio.wait_for(self.reader.read(65536), left)
            except (TimeoutError, ConnectionError):
                data = b""
                if loop.time() < deadline:
                    seen.dropped = True
                break
            if not data:
                seen.dropped = True
                break
            self.buf += data
            frames, used, bad = ws_frames.read_frames(
                self.buf, masked=False, max_size=1 << 20, kinds=ALL_OPCODES
            )
            del self.buf[:used]
            for opcode, payload in frames:
                if opcode in (TEXT, BINARY):
                    seen.answers += 1
                elif opcode == PONG:
                    seen.pongs.append(payload)
                elif opcode == CLOSE and seen.close is None:
                    seen.close = struct.unpack("!H", payload[:2])[0] if payload else 1005
            if bad:
                raise ConnectionError(f"the server sent a frame we cannot read: {self.buf[:8]!r}")
        return seen

    def abort(self) -> None:
        self.writer.transport.abort()


@dataclass(frozen=True)
class Case:
    """``send``: the chunks (one write each, ``gap`` s apart); then ``answers`` answers and
    ``pongs`` pongs are expected, and a close with ``close`` (None: the socket stays open and
    answers one more command; 0: any close or a dropped connection)."""

    id: str
    what: str
    send: Sequence[bytes]
    answers: int = 0
    pongs: Sequence[bytes] = ()
    close: int | None = None
    gap: float = 0.0


async def run_case(url: str, case: Case) -> str:
    """Empty if the case held, else what came instead."""
    sock = await RawSocket.open(url)
    try:
        await sock.send(*case.send, gap=case.gap)
        if case.close is None:
            await sock.send(frame(TEXT, command(999)))
            want = case.answers + 1
            seen = await sock.until(lambda s: s.answers >= want and len(s.pongs) >= len(case.pongs))
            ok = seen.answers == want and seen.close is None and not seen.dropped
        else:
            seen = await sock.until(lambda s: s.close is not None)
            closed = seen.close is not None or seen.dropped
            ok = seen.answers == case.answers and closed
            if case.close:
                ok = ok and seen.close == case.close
        ok = ok and list(seen.pongs) == list(case.pongs)
        return "" if ok else f"{seen}"
    finally:
        sock.abort()


def cases() -> list[Case]:
    """The cases: by Autobahn's sections (1 framing, 2 pings, 3 reserved bits, 4 opcodes,
    5 fragmentation, 6 UTF-8, 7 close, 9 sizes), as far as a server that answers commands
    can be asked them."""
    ok = command(1)
    text, binary = frame(TEXT, ok), frame(BINARY, ok)
    half = len(ok) // 2
    first, rest = ok[:half], ok[half:]
    out = [
        Case("1.1.1", "text message", [text], 1),
        Case("1.1.2", "text message of 125 bytes", [frame(TEXT, command(1, 125 - len(ok)))], 1),
        Case("1.1.3", "text message of 126 bytes", [frame(TEXT, command(1, 126 - len(ok)))], 1),
        Case("1.1.4", "text message of 4096 bytes", [frame(TEXT, command(1, 4096 - len(ok)))], 1),
        Case("1.1.5", "ten text messages in one write", [text * 10], 10),
        Case("1.1.6", "a message cut into 1-byte writes", [bytes([b]) for b in text], 1),
        Case("1.2.1", "binary message", [binary], 1),
        Case("1.2.2", "empty text message", [frame(TEXT)], 1),
        Case("1.2.3", "empty binary message", [frame(BINARY)], 1),
        Case("2.1", "ping without payload", [frame(PING)], 0, [b""]),
        Case("2.2", "ping with payload", [frame(PING, b"hello")], 0, [b"hello"]),
        Case(
            "2.3", "ping with binary payload", [frame(PING, bytes(range(8)))], 0, [bytes(range(8))]
        ),
        Case("2.4", "ping of 125 bytes", [frame(PING, b"*" * 125)], 0, [b"*" * 125]),
        Case("2.5", "ping of 126 bytes", [frame(PING, b"*" * 126)], close=1002),
        Case(
            "2.6",
            "ten pings",
            [frame(PING, b"%d" % k) for k in range(10)],
            0,
            [b"%d" % k for k in range(10)],
        ),
        Case("2.7", "unsolicited pong", [frame(PONG, b"x")]),
        Case("2.8", "unsolicited pong, then a message", [frame(PONG, b"x"), text], 1),
        Case("2.9", "pings in 1-byte writes", [bytes([b]) for b in frame(PING, b"ab")], 0, [b"ab"]),
        Case("2.10", "a message after a ping", [frame(PING, b"p") + text], 1, [b"p"]),
    ]
    for rsv in range(1, 8):
        out.append(Case(f"3.{rsv}", f"RSV bits {rsv:03b}", [frame(TEXT, ok, rsv=rsv)], close=1002))
    out.append(Case("3.8", "RSV bits on a ping", [frame(PING, rsv=4)], close=1002))
    out.append(
        Case(
            "3.9",
            "a message, then RSV bits",
            [text, frame(TEXT, ok, rsv=2)],
            1,
            close=1002,
            gap=0.2,
        )
    )
    for k, opcode in enumerate((3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF), 1):
        out.append(
            Case(f"4.{k}", f"reserved opcode {opcode:#x}", [frame(opcode, b"x")], close=1002)
        )
    out.append(
        Case(
            "4.11",
            "a message, reserved opcode, a message",
            [text, frame(5) + text],
            1,
            close=1002,
            gap=0.2,
        )
    )
    out += [
        Case("5.1", "ping with FIN unset", [frame(PING, fin=False)], close=1002),
        Case("5.2", "pong with FIN unset", [frame(PONG, fin=False)], close=1002),
        Case(
            "5.3", "text in two fragments", [frame(TEXT, first, fin=False) + frame(CONT, rest)], 1
        ),
        Case(
            "5.4",
            "text in two fragments, two writes",
            [frame(TEXT, first, fin=False), frame(CONT, rest)],
            1,
            gap=0.1,
        ),
        Case(
            "5.5",
            "text in one-byte fragments",
            [
                frame(TEXT, ok[:1], fin=False)
                + b"".join(frame(CONT, ok[k : k + 1], fin=False) for k in range(1, len(ok) - 1))
                + frame(CONT, ok[-1:])
            ],
            1,
        ),
        Case(
            "5.6",
            "ping between fragments",
            [frame(TEXT, first, fin=False) + frame(PING, b"m") + frame(CONT, rest)],
            1,
            [b"m"],
        ),
        Case(
            "5.7",
            "ping between fragments, separate writes",
            [frame(TEXT, first, fin=False), frame(PING, b"m"), frame(CONT, rest)],
            1,
            [b"m"],
            gap=0.1,
        ),
        Case(
            "5.8",
            "pong between fragments",
            [frame(TEXT, first, fin=False) + frame(PONG, b"m") + frame(CONT, rest)],
            1,
        ),
        Case("5.9", "continuation without a start", [frame(CONT, ok)], close=1002),
        Case(
            "5.10",
            "continuation with FIN unset, no start",
            [frame(CONT, ok, fin=False)],
            close=1002,
        ),
        Case(
            "5.11",
            "new message while fragmented",
            [frame(TEXT, first, fin=False) + text],
            close=1002,
        ),
        Case(
            "5.12",
            "binary in two fragments",
            [frame(BINARY, first, fin=False) + frame(CONT, rest)],
            1,
        ),
        Case(
            "5.13",
            "empty fragments around a message",
            [frame(TEXT, b"", fin=False) + frame(CONT, ok, fin=False) + frame(CONT)],
            1,
        ),
        Case(
            "6.1",
            "valid UTF-8 (4-byte characters)",
            [frame(TEXT, json.dumps({"type": "ping", "id": "🂡𝄞"}, ensure_ascii=False).encode())],
            1,
        ),
        Case("6.2", "invalid UTF-8", [frame(TEXT, b'{"type":"ping","id":"\xff"}')], close=1007),
        Case(
            "6.3",
            "a 4-byte character cut between fragments",
            [
                frame(TEXT, '{"type":"ping","id":"🂡'.encode()[:-2], fin=False)
                + frame(CONT, '🂡"}'.encode()[2:])
            ],
            1,
        ),
        Case(
            "6.4",
            "invalid UTF-8 in a fragment",
            [frame(TEXT, b'{"type":"ping",', fin=False) + frame(CONT, b'"id":"\xc0\xaf"}')],
            close=1007,
        ),
        Case(
            "6.5",
            "surrogate encoded in UTF-8",
            [frame(TEXT, b'{"type":"ping","id":"\xed\xa0\x80"}')],
            close=1007,
        ),
        Case(
            "7.1.1",
            "close 1000 after a message",
            [text, frame(CLOSE, close_payload(1000))],
            1,
            close=1000,
            gap=0.2,
        ),
        Case("7.1.2", "two closes", [frame(CLOSE, close_payload(1000)) * 2], close=1000),
        Case(
            "7.1.3",
            "message after close: dropped",
            [frame(CLOSE, close_payload(1000)) + text],
            close=1000,
        ),
        Case(
            "7.1.4",
            "ping after close: not answered",
            [frame(CLOSE, close_payload(1000)) + frame(PING, b"x")],
            close=1000,
        ),
        Case(
            "7.1.5",
            "close between fragments",
            [frame(TEXT, first, fin=False) + frame(CLOSE, close_payload(1000)) + frame(CONT, rest)],
            close=1000,
        ),
        Case(
            "7.1.5b",
            "close between fragments, separate writes",
            [frame(TEXT, first, fin=False), frame(CLOSE, close_payload(1000)), frame(CONT, rest)],
            close=1000,
            gap=0.1,
        ),
        Case(
            "7.1.6",
            "close after many messages",
            [text * 50, frame(CLOSE, close_payload(1000))],
            50,
            close=1000,
            gap=0.5,
        ),
        Case("7.3.1", "close without payload", [frame(CLOSE)], close=1005),
        Case("7.3.2", "close with a 1-byte payload", [frame(CLOSE, b"\x03")], close=1002),
        Case(
            "7.3.3", "close with a reason", [frame(CLOSE, close_payload(1000, b"bye"))], close=1000
        ),
        Case(
            "7.3.4",
            "close with a reason of 123 bytes",
            [frame(CLOSE, close_payload(1000, b"*" * 123))],
            close=1000,
        ),
        Case(
            "7.3.5",
            "close with a payload of 126 bytes",
            [frame(CLOSE, close_payload(1000, b"*" * 124))],
            close=1002,
        ),
        Case(
            "7.5.1",
            "close with an invalid UTF-8 reason",
            [frame(CLOSE, close_payload(1000, b"\xff"))],
            close=1007,
        ),
        Case(
            "9.1",
            "text message of 4097 bytes",
            [frame(TEXT, command(1, 4097 - len(ok)))],
            close=1009,
        ),
        Case(
            "9.2",
            "fragments adding up to 4097 bytes",
            [frame(TEXT, b"x" * 4000, fin=False) + frame(CONT, b"x" * 97)],
            close=1009,
        ),
        Case("9.3", "a 64 KiB frame", [frame(BINARY, b"x" * 65536)], close=1009),
    ]
    for k, code in enumerate((1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999), 1):
        out.append(
            Case(
                f"7.7.{k}",
                f"close with code {code}",
                [frame(CLOSE, close_payload(code))],
                close=code,
            )
        )
    for k, code in enumerate((0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535), 1):
        out.append(
            Case(
                f"7.9.{k}",
                f"close with invalid code {code}",
                [frame(CLOSE, close_payload(code))],
                close=1002,
            )
        )
    return out


async def run_all(url: str, chosen: Sequence[Case]) -> list[tuple[Case, str]]:
    results = []
    for case in chosen:
        try:
            results.append((case, await run_case(url, case)))
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as e:
            results.append((case, f"{type(e).__name__}: {e}"))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m load_tests.ws_conformance", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--url", help="a running node's WebSocket URL (loopback only)")
    args = parser.parse_args(argv)
    cluster = None
    if args.url:
        require_loopback(args.url, "--url")
        url = endpoint_for(args.url).ws
    else:
        cluster = Cluster(1)
        cluster.start()
        url = cluster.endpoints[0].ws
    try:
        results = asyncio.run(run_all(url, cases()))
    finally:
        if cluster is not None:
            cluster.stop()
    failed = [(case, why) for case, why in results if why]
    for case, why in failed:
        print(f"failed {case.id} ({case.what}): {why}")
    sections: dict[str, list[int]] = {}
    for case, why in results:
        tally = sections.setdefault(case.id.split(".")[0], [0, 0])
        tally[0] += not why
        tally[1] += 1
    for section, (passed, total) in sorted(sections.items(), key=lambda s: int(s[0])):
        print(f"section_{section}: {passed}/{total}")
    print(f"cases: {len(results)}")
    print(f"failed: {len(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
