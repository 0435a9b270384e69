"""The hands' compact encoding gives back exactly what it was given."""

from __future__ import annotations

import random
import zlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from load_tests.record_games import played_game
from server.record.hand_codec import _ZDICT, decode_hand, encode_hand

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


@given(JSON, JSON)
def test_any_json_value_round_trips(over: Any, audit: Any) -> None:
    assert decode_hand(encode_hand(over, audit)) == (over, audit)


def test_a_played_games_hands_round_trip_in_under_a_kilobyte_each() -> None:
    record, _ = played_game(random.Random(11), "roomEEEE", ["a", "b", "c", "d"], 1.7e9)
    sizes = []
    for hand in record.hands:
        data = encode_hand(hand.over, hand.audit)
        sizes.append(len(data))
        assert decode_hand(data) == (hand.over, hand.audit)
    assert max(sizes) < 1024, sizes


def test_the_dictionary_of_format_1_never_changes() -> None:
    # Records kept with format 1 decode only with this very dictionary: a change needs format 2.
    assert zlib.crc32(_ZDICT) == 0x9026AEFE


def test_a_corrupt_or_bloated_record_is_refused() -> None:
    data = encode_hand({"hand": 1}, None)
    with pytest.raises(zlib.error):
        decode_hand(data[:-3] + b"xyz")
    with pytest.raises(ValueError):
        decode_hand(data, 2)
    bomb = zlib.compressobj(9, zdict=_ZDICT)
    with pytest.raises(ValueError):
        decode_hand(bomb.compress(b"\x00" * (2 << 20)) + bomb.flush())
