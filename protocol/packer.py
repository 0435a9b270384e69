"""msgpack encoding through one reused ``Packer``.

``msgpack.packb`` builds a new ``Packer`` on every call, and each allocates its own buffer, for
each of the several packs a card makes. One packer, reset after each value, does the same
encoding without it. Safe to share
within a process: ``pack`` runs in C from start to end on the plain values packed here (no
callback into Python), so under the GIL no other thread's call can interleave with it, and an
error resets the buffer.
"""

from __future__ import annotations

from typing import Any

import msgpack

_PACKER = msgpack.Packer(use_bin_type=True, autoreset=True)


def pack(value: Any) -> bytes:
    """``msgpack.packb(value, use_bin_type=True)``."""
    data: bytes = _PACKER.pack(value)
    return data
