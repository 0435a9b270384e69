"""Hostile frames for the wire fuzzer (hypothesis strategies) and the checks on what comes back.

No sockets here: ``frames_for(kind, subprotocol)`` draws frames a socket of that kind sends,
and ``answer_problems`` / ``trace_text`` judge the server's frames. Both the suite's short run
(tests/e2e/test_fuzz_wire.py) and the long run (load_tests/fuzz.py) use these, so they test alike.

Socket kinds: ``anon`` (never authenticated), ``stranger`` (authenticated, in no room of the
game), ``watcher`` (watching the game in progress) and ``seat`` (a second socket of a seated
player). Watchers and seats never send what would legitimately take them out of the room
(``join``, ``resume``, ``open_room``, ``leave``, ``queue``): then a refused frame must leave
their views unchanged, and the game they watch must still finish.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import msgpack
from hypothesis import strategies as st

from protocol.codec import MAX_FRAME_BYTES, MSGPACK
from protocol.errors import ERRORS
from protocol.messages import BOT_LEVELS, COMMANDS, MOON_CHOICES, ROOM_CODE_CHARS

KINDS = ("anon", "stranger", "watcher", "seat")
LEAVES_THE_ROOM = frozenset({"join", "resume", "open_room", "leave", "queue"})
CARD_NAMES = [r + s for s in "CDSH" for r in "23456789TJQKA"]
MSGPACK_INT = st.integers(-(2**63), 2**64 - 1)  # what msgpack can carry at all
NO_ID = object()  # the frame has no id the server could read


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame to send, and what its answer's ``re`` must be (NO_ID: not predicted)."""

    payload: bytes | str
    command: str  # the type it claims, or "raw" / "mutated" / "deep"
    expect_re: Any = NO_ID


# -- the values a field may get ------------------------------------------------------------


def scalars(binary: bool) -> st.SearchStrategy[Any]:
    ints = MSGPACK_INT if binary else st.integers(-(10**30), 10**30)
    base = [
        st.none(),
        st.booleans(),
        ints,
        st.sampled_from([0, -1, 2**31, 2**53, 2**53 + 1, 2**63 - 1, -(2**63)]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=40),
        st.sampled_from(["", " ", "\x00", "\u202e2C", "2C\u200b", "Ｑ\u0053", "🂡", "QS" * 40]),
    ]
    if binary:
        return st.one_of(*base, st.binary(max_size=16))  # bin: refused by the decoder outright
    return st.one_of(*base)


def hostile(binary: bool) -> st.SearchStrategy[Any]:
    """Anything at all, nested a little: wrong types, huge numbers, odd unicode."""
    return st.recursive(
        scalars(binary),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    )


def room_codes() -> st.SearchStrategy[str]:
    # Never the game's room: a stranger entering it would be a legitimate change.
    return st.text(alphabet=sorted(ROOM_CODE_CHARS), min_size=4, max_size=40).map(
        lambda s: "zz" + s
    )


def good_value(field: str) -> st.SearchStrategy[Any]:
    """A value of the right type for a field (often a wrong one for the moment)."""
    cards = st.sampled_from(CARD_NAMES)
    options = st.dictionaries(
        st.sampled_from(["target", "moon", "revokes", "tie", "pace", "hints", "clocks", "x"]),
        st.one_of(
            st.sampled_from([50, 100, 75, True, "others_26", "allowed", "play_off", "live"]),
            st.text(max_size=12),
        ),
        max_size=4,
    )
    return {
        "token": st.one_of(st.text(max_size=80), st.just("a.b"), st.just("x" * 512)),
        "room": room_codes(),
        "seq": st.integers(0, 2**53),
        "level": st.sampled_from(BOT_LEVELS),
        "cards": st.lists(cards, min_size=3, max_size=3),
        "card": cards,
        "choice": st.sampled_from(MOON_CHOICES),
        "seat": st.integers(-1, 4),
        "t": st.floats(-1e12, 1e12),
        "options": options,
        "commitment": st.binary(min_size=32, max_size=32).map(bytes.hex),
        "secret": st.binary(min_size=32, max_size=32).map(bytes.hex),
        "hand": st.integers(0, 12),
        "target": st.sampled_from([50, 100, 75]),
        "limit": st.integers(0, 101),
    }.get(field, st.none())


def good_ids() -> st.SearchStrategy[Any]:
    """Ids the docs allow: a string of 0 to 64 characters or a 64-bit integer; all echoed."""
    return st.one_of(MSGPACK_INT, st.text(max_size=64))


def bad_ids(binary: bool) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.floats(),
        st.lists(MSGPACK_INT if binary else st.integers(), max_size=2),
        st.text(min_size=65, max_size=80),
        st.integers(min_value=2**64) if not binary else st.integers(-(2**63), -(2**63)),
    )


def commands_for(kind: str) -> list[str]:
    allowed = sorted(COMMANDS)
    if kind in ("watcher", "seat"):
        allowed = [c for c in allowed if c not in LEAVES_THE_ROOM]
    return allowed


@st.composite
def messages(draw: st.DrawFn, kind: str, binary: bool) -> tuple[dict[Any, Any], str, Any]:
    """A command-shaped map: right or wrong type, fields right, wrong, missing or extra."""
    command = draw(
        st.one_of(
            st.sampled_from(commands_for(kind)),
            st.sampled_from(["", "PLAY", "play ", "event", "ok", "error", "__class__"]),
            st.text(max_size=20),
        )
    )
    message: dict[Any, Any] = {"type": command}
    has_id = draw(st.integers(0, 9))
    expect: Any = NO_ID
    if has_id >= 2:
        cid = draw(good_ids())
        message["id"] = expect = cid
    elif has_id == 1:
        message["id"] = bad = draw(bad_ids(binary))
        expect = None if not (type(bad) is int and -(2**63) <= bad < 2**64) else bad
    else:
        expect = None
    for name in COMMANDS.get(command, {}):
        choice = draw(st.integers(0, 9))
        if choice <= 6:
            message[name] = draw(good_value(name))
        elif choice <= 8:
            message[name] = draw(hostile(binary))
    if draw(st.integers(0, 9)) == 0:
        message[draw(st.text(max_size=10))] = draw(hostile(binary))
    if draw(st.integers(0, 19)) == 0:
        message["type"] = draw(hostile(binary))  # not even a string
    if binary and _has_bytes(message):
        expect = None  # a bin value anywhere: the frame cannot be read at all
    return message, command if isinstance(message["type"], str) else "bad_type", expect


def _has_bytes(value: Any) -> bool:
    if isinstance(value, bytes):
        return len(value) > 0  # an empty bin passes the decoder's bound of 0 bytes
    if isinstance(value, dict):
        return any(_has_bytes(k) or _has_bytes(v) for k, v in value.items())
    return isinstance(value, list) and any(_has_bytes(v) for v in value)


def encode(message: Any, binary: bool) -> bytes | str:
    if binary:
        packed: bytes = msgpack.packb(message, use_bin_type=True)
        return packed
    return json.dumps(message, ensure_ascii=False, allow_nan=True)


@st.composite
def mutated(draw: st.DrawFn, kind: str, binary: bool) -> Frame:
    """A well-formed frame with bytes flipped, cut or spliced in."""
    message, _, _ = draw(messages(kind, binary))
    encoded = encode(message, binary)
    data = bytearray(encoded if isinstance(encoded, bytes) else encoded.encode("utf-8"))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "cut":
            del data[at : at + draw(st.integers(1, 8))]
        else:
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
    if binary:
        return Frame(bytes(data), "mutated")
    return Frame(bytes(data).decode("utf-8", errors="replace"), "mutated")


def deep(binary: bool, depth: int) -> Frame:
    """A ping whose ``t`` is ``depth`` arrays deep (the frame stays under the size limit)."""
    if binary:
        head = msgpack.packb({"type": "ping", "id": 1})[1:]  # the two pairs, without the header
        return Frame(b"\x83" + head + msgpack.packb("t") + b"\x91" * depth + b"\xc0", "deep")
    return Frame('{"type":"ping","id":1,"t":' + "[" * depth + "]" * depth + "}", "deep")


JSON_ODDITIES = [
    '{"type":"ping","id":"\\udc00x"}',  # a lone surrogate (fuzz-findings F10)
    '{"type":"ping","id":1,"t":NaN}',
    '{"type":"ping","id":1,"t":-Infinity}',
    '{"type":"ping","id":1,"t":1e999}',
    '{"type":"play","id":2,"card":123456789012345678901234567890}',
    '{"type":"ping","id":3,"id":4}',
    '{"type":"ping","id":"\\u0000"}',
    '{"type":"play","id":5,"card":"\\ud83c"}',
    '{"type":"ping","id":6,"t":1}garbage',
    '\ufeff{"type":"ping","id":7}',
    '{"type":"view","id":8}\n',
    "[]",
    "0",
    '"ping"',
]


def frames_for(kind: str, subprotocol: str, max_depth: int = 1500) -> st.SearchStrategy[Frame]:
    """Every sort of hostile frame a socket of this kind and subprotocol may send.

    ``max_depth`` bounds nesting on the JSON subprotocol (deep nesting was fuzz-findings F3).
    """
    binary = subprotocol == MSGPACK

    def framed(drawn: tuple[dict[Any, Any], str, Any]) -> Frame:
        message, command, expect = drawn
        return Frame(encode(message, binary), command, expect)

    raw_same = st.binary(max_size=200) if binary else st.text(max_size=200)
    raw_other = st.text(max_size=50) if binary else st.binary(max_size=50)
    depth = st.integers(1, 3000 if binary else max_depth)
    choices = [
        messages(kind, binary).map(framed),
        messages(kind, binary).map(framed),
        messages(kind, binary).map(framed),
        mutated(kind, binary),
        raw_same.map(lambda p: Frame(p, "raw")),
        raw_other.map(lambda p: Frame(p, "raw")),
        depth.map(lambda d: deep(binary, d)),
    ]
    if not binary:
        choices.append(st.sampled_from(JSON_ODDITIES).map(lambda p: Frame(p, "raw")))
    return st.one_of(*choices).filter(lambda f: len(f.payload) <= MAX_FRAME_BYTES)


# -- judging what came back ------------------------------------------------------------------

TRACE = re.compile(
    r"Traceback \(most recent|File \"[^\"]*\", line \d+|\b[A-Z][a-z]+(?:[A-Z][a-z]+)*Error\b"
    r"|\bException\b|<(?:class|module|function) '|object at 0x[0-9a-f]+"
)
PYTHON_TEXT = re.compile(r"is not a valid [A-Z]\w*")  # an Enum's ValueError (fuzz-findings F6)


def trace_text(frame: Any) -> str | None:
    """The stack-trace-like text a server frame carries, if any."""
    match = TRACE.search(repr(frame))
    return match.group(0) if match else None


def answer_problems(sent: Frame, answer: Any) -> list[tuple[str, str]]:
    """What is wrong with the answer to one frame: (finding, detail) pairs.

    ``finding`` is "" for a new problem, or the id of a known finding in fuzz-findings.md.
    """
    problems: list[tuple[str, str]] = []
    if not isinstance(answer, dict) or answer.get("type") not in ("ok", "error"):
        return [("", f"not an ok or error answer: {answer!r:.200}")]
    if answer["type"] == "error":
        code, message = answer.get("code"), answer.get("message")
        if code not in ERRORS:
            problems.append(("", f"unregistered error code {code!r}"))
        if code == "internal_error":
            problems.append(("", "internal_error"))
        if not isinstance(message, str) or not message.strip():
            problems.append(("", f"no sentence with the error: {message!r}"))
        elif PYTHON_TEXT.search(message):
            problems.append(("", f"Python text in the sentence: {message!r}"))
    if sent.expect_re is not NO_ID and answer.get("re") != sent.expect_re:
        problems.append(("", f"re {answer.get('re')!r} where {sent.expect_re!r} was expected"))
    trace = trace_text(answer)
    if trace:
        problems.append(("", f"stack-trace text {trace!r} in {answer!r:.200}"))
    return problems


def comparable_view(view: dict[str, Any]) -> dict[str, Any]:
    """A view without what moves with time alone (each seat's clock)."""
    out = dict(view)
    out["seats"] = [
        {k: v for k, v in seat.items() if k != "clock"} if isinstance(seat, dict) else seat
        for seat in view.get("seats", [])
    ]
    return out
