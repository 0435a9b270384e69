"""The protocol core without sockets: codecs, validation, and the documentation kept true."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import JSON, MSGPACK, Codec
from protocol.errors import ERRORS, ProtocolError
from protocol.messages import COMMANDS, parse_command

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()


def test_every_command_and_error_code_is_documented() -> None:
    for kind in COMMANDS:
        assert f"| `{kind}` |" in DOC, f"docs/protocol.md does not document {kind}"
    for code in ERRORS:
        assert f"| `{code}` |" in DOC, f"docs/protocol.md does not document {code}"


def test_a_valid_play_is_parsed_to_a_card_number() -> None:
    cmd = parse_command({"type": "play", "id": "a1", "card": "QS"})
    assert (cmd.type, cmd.id, cmd.args) == ("play", "a1", {"card": 36})
    cmd = parse_command({"type": "pass", "id": 7, "cards": ["2C", "AH", "QS"]})
    assert cmd.args["cards"] == (1 << 0) | (1 << 51) | (1 << 36)


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"type": "play", "card": "QS"}, "bad_field"),  # no id
        ({"type": "play", "id": True, "card": "QS"}, "bad_field"),
        ({"type": "teleport", "id": 1}, "unknown_type"),
        ({"id": 1}, "bad_field"),
        ({"type": "play", "id": 1}, "bad_field"),
        ({"type": "play", "id": 1, "card": "1S"}, "bad_field"),
        ({"type": "play", "id": 1, "card": "QS", "extra": 1}, "bad_field"),
        ({"type": "pass", "id": 1, "cards": ["2C", "2C", "3C"]}, "bad_field"),
        ({"type": "boot", "id": 1, "seat": 4}, "bad_field"),
        ({"type": "boot", "id": 1, "seat": True}, "bad_field"),
        ({"type": "join", "id": 1, "room": "../../etc"}, "bad_field"),
        ({"type": "moon", "id": 1, "choice": "shooter_chooses"}, "bad_field"),
    ],
)
def test_bad_commands_are_refused_with_a_stable_code(message: dict[str, object], code: str) -> None:
    with pytest.raises(ProtocolError) as e:
        parse_command(message)
    assert e.value.code == code and e.value.message


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_decode_to_a_map_or_a_malformed_frame_error(data: bytes) -> None:
    try:
        message = Codec(MSGPACK).decode(data)
    except ProtocolError as e:
        assert e.code == "malformed_frame"
        return
    assert isinstance(message, dict)


values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=10), values, max_size=6))
def test_any_map_is_a_command_or_a_refusal_never_a_crash(message: dict[str, object]) -> None:
    for name in (MSGPACK, JSON):
        codec = Codec(name)
        decoded = codec.decode(codec.encode(message))
        try:
            parse_command(decoded)
        except ProtocolError as e:
            assert e.code in ERRORS


def test_decoding_is_bounded() -> None:
    huge = msgpack.packb({"type": "ping", "id": 1, "pad": list(range(10_000))})
    with pytest.raises(ProtocolError):
        Codec(MSGPACK).decode(huge)


def test_every_command_has_a_handler_in_the_dispatch_table() -> None:
    from server.net.connection import ROUTES

    assert set(ROUTES) == set(COMMANDS)
