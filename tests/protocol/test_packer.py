"""The reused packer encodes exactly as ``msgpack.packb``, one value after another."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.packer import pack

leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | st.binary(max_size=40)
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=30,
)


@given(st.lists(values, min_size=1, max_size=5))
def test_pack_is_packb_for_each_value_in_turn(items: list[object]) -> None:
    for value in items:
        assert pack(value) == msgpack.packb(value, use_bin_type=True)


def test_a_value_that_cannot_be_packed_leaves_nothing_behind() -> None:
    with pytest.raises(TypeError):
        pack([1, 2, object()])
    assert pack([3]) == msgpack.packb([3], use_bin_type=True)
