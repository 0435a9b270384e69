"""A finished hand's two records in a few hundred bytes, and back exactly.

A hand's summary and audit as JSON take about 2.7 KB (27 KB for a game to 100, measured on
played games), mostly hex secrets, card names and the same keys thirteen times over; the
issue's aim is 8 KB for a whole game with its indexes. So the ``hands.record`` column holds:

    zlib( msgpack( {"over": …, "audit": …} ) ) with a preset dictionary of the records' keys,

where, inside the msgpack, a lowercase hex string of 8 bytes or more is stored as its bytes and
a non-empty list of card names as one extension value of card numbers. Both are exact inverses
on JSON values (which hold neither bytes nor extension values), so decoding gives back the very
records that were encoded; a value the encoder does not recognise is stored as it is. The
``hands.format`` column names this encoding, so a later one can be added beside it.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

import msgpack

from protocol.cards import DECK_SIZE, card_name, is_card_name, parse_card

FORMAT = 1
CARDS_EXT = 1  # msgpack extension type: a list of card names, one byte (0..51) each
MIN_HEX_BYTES = 8  # shorter hex-looking strings (a name, "cafe") stay strings: nothing to gain
_HEX = re.compile(r"(?:[0-9a-f]{2})+")
_KEYS = (
    *("over", "audit", "hand", "points", "scores", "shooter", "pass_direction", "tricks"),
    *("leader", "cards", "winner", "revoke_call", "v", "game", "server_commitment"),
    *("server_secret", "seats", "seat", "kind", "human", "bot", "absent", "commitment"),
    *("secret", "deal", "passes", "left", "right", "across", "none"),
)
# Fixed forever for FORMAT 1: records encoded with it can only be decoded with it.
_ZDICT = b"".join(msgpack.packb(key) for key in _KEYS)
MAX_DECODED = 1 << 20  # a hand's records are a few KB: refuse to inflate a bomb


def _pack_value(value: Any) -> Any:
    if isinstance(value, str):
        if len(value) >= 2 * MIN_HEX_BYTES and _HEX.fullmatch(value):
            return bytes.fromhex(value)
        return value
    if isinstance(value, list):
        if value and all(isinstance(v, str) and is_card_name(v) for v in value):
            return msgpack.ExtType(CARDS_EXT, bytes(parse_card(v) for v in value))
        return [_pack_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _pack_value(v) for k, v in value.items()}
    return value


def _ext(code: int, data: bytes) -> Any:
    if code != CARDS_EXT:
        raise ValueError(f"unknown extension {code} in a hand record")
    if any(c >= DECK_SIZE for c in data):
        raise ValueError("a hand record names a card that does not exist")
    return [card_name(c) for c in data]


def _unpack_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [_unpack_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _unpack_value(v) for k, v in value.items()}
    return value


def encode_hand(over: Any, audit: Any) -> bytes:
    """The stored form of a hand's records (JSON values, as ``HandRecord`` checked them)."""
    packed = msgpack.packb(_pack_value({"over": over, "audit": audit}), use_bin_type=True)
    compressor = zlib.compressobj(9, zdict=_ZDICT)
    return compressor.compress(packed) + compressor.flush()


def decode_hand(data: bytes, format_: int = FORMAT) -> tuple[Any, Any]:
    """``(over, audit)`` exactly as they were given to ``encode_hand``."""
    if format_ != FORMAT:
        raise ValueError(f"unknown hand record format {format_}")
    inflater = zlib.decompressobj(zdict=_ZDICT)
    packed = inflater.decompress(data, MAX_DECODED)
    if inflater.unconsumed_tail or not inflater.eof:
        raise ValueError("a hand record is truncated or too large")
    value = msgpack.unpackb(packed, raw=False, ext_hook=_ext, strict_map_key=True)
    decoded = _unpack_value(value)
    return decoded["over"], decoded["audit"]
