"""A game's hands in their compact encoding give back exactly what they were given."""

from __future__ import annotations

import copy
import json
import random
import zlib
from collections.abc import Callable
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from load_tests.record_games import played_game
from protocol.shuffle import bot_secret, deal_context
from server.record.hand_codec import _ZDICT, DERIVED_EXT, TRICKS_EXT, decode_hands, encode_hands

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=70)
    | st.sampled_from(["QS", "2C", "ab" * 8, "AB" * 8, "0" * 64, "", "qs"]),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=40,
)


def exact(value: Any) -> str:
    """The JSON text: tells 1 from 1.0 and True, and one key order from another."""
    return json.dumps(value)


def round_trips(hands: list[tuple[Any, Any]]) -> bytes:
    data = encode_hands(hands)
    assert exact(decode_hands(data)) == exact(hands)
    return data


def played_hands(seed: int) -> list[tuple[Any, Any]]:
    record, _ = played_game(random.Random(seed), "roomEEEE", ["a", "b", "c", "d"], 1.7e9)
    return [(h.over, h.audit) for h in record.hands]


@given(st.lists(st.tuples(JSON, JSON), max_size=3))
def test_any_json_values_round_trip(hands: list[tuple[Any, Any]]) -> None:
    round_trips(hands)


def test_a_played_game_round_trips_exactly_in_a_few_kilobytes() -> None:
    hands = played_hands(11)
    data = round_trips(hands)
    assert len(data) < 400 * len(hands), (len(data), len(hands))


def test_values_that_do_not_recompute_are_kept_as_they_are() -> None:
    hands = played_hands(12)
    base = len(encode_hands(hands))
    spoilt = copy.deepcopy(hands)
    over, audit = spoilt[0]
    inner = audit["audit"]
    over["tricks"][0]["winner"] = (over["tricks"][0]["winner"] + 1) % 4  # a wrong taker
    inner["seats"][1]["commitment"] = "00" * 32  # a commitment the secret does not match
    inner["server_commitment"] = inner["server_commitment"].upper()  # not hex as stored
    inner["deal"][0], inner["deal"][1] = inner["deal"][1], inner["deal"][0]  # not the deck's
    first = spoilt[1][0]["tricks"][0]
    first["leader"] = float(first["leader"])  # == the int in Python, not in JSON
    spoilt[2][0]["tricks"] = list(reversed(spoilt[2][0]["tricks"]))
    assert len(round_trips(spoilt)) > base  # kept in full, so it costs more


def test_tricks_not_led_as_play_goes_are_kept_as_they_are() -> None:
    hands = played_hands(14)
    base = len(encode_hands(hands))
    changes: list[Callable[[Any], None]] = [
        lambda t: t[5].update(leader=(t[5]["leader"] + 1) % 4),  # not the taker of trick 5
        lambda t: t[0].update(leader=float(t[0]["leader"])),
        lambda t: t[3].update(cards=t[3]["cards"][:3]),  # a short trick before the last
        lambda t: t.append({"cards": ["2C"], "leader": 0}),  # other key order
        lambda t: t[2].update(note="x"),
    ]
    for change in changes:
        spoilt = copy.deepcopy(hands)
        change(spoilt[0][1]["audit"]["tricks"])
        assert len(round_trips(spoilt)) > base


def test_a_bot_seats_secret_is_recomputed_and_a_short_trick_ends_a_hand() -> None:
    hands = played_hands(13)
    over, audit = copy.deepcopy(hands[0])
    inner = audit["audit"]
    ctx = deal_context(inner["game"], inner["hand"])
    server = bytes.fromhex(inner["server_secret"])
    inner["seats"][2] = {
        "seat": 2,
        "kind": "bot",
        "commitment": None,
        "secret": bot_secret(ctx, server, 2).hex(),
    }
    inner["tricks"][-1]["cards"] = inner["tricks"][-1]["cards"][:2]  # the game ended mid-trick
    over["tricks"] = over["tricks"][:-1]  # the summary lists the finished tricks
    with_bot = round_trips([(None, audit), (over, audit)])
    inner["seats"][2]["secret"] = "11" * 32
    assert len(round_trips([(None, audit), (over, audit)])) > len(with_bot)


def test_the_dictionary_of_format_1_never_changes() -> None:
    # Records kept with format 1 decode only with this very dictionary: a change needs format 2.
    assert zlib.crc32(_ZDICT) == 0x9026AEFE


def compressed(value: Any) -> bytes:
    packer = zlib.compressobj(9, zdict=_ZDICT)
    return packer.compress(msgpack.packb(value, use_bin_type=True)) + packer.flush()


def test_a_corrupt_or_bloated_record_is_refused() -> None:
    data = encode_hands([({"hand": 1}, None)])
    with pytest.raises(zlib.error):
        decode_hands(data[:-3] + b"xyz")
    with pytest.raises(ValueError):
        decode_hands(data, 2)
    bomb = zlib.compressobj(9, zdict=_ZDICT)
    with pytest.raises(ValueError):
        decode_hands(bomb.compress(b"\x00" * (16 << 20)) + bomb.flush())
    marker = msgpack.ExtType(DERIVED_EXT, b"")
    tricks = [msgpack.ExtType(TRICKS_EXT, data) for data in (b"\x00", b"\x04\x01", b"\x00\x40")]
    for bad in ({"hand": 1}, [[{"hand": marker}, None]], [[{"tricks": marker}, None]], *tricks):
        with pytest.raises(ValueError):
            decode_hands(compressed(bad))
