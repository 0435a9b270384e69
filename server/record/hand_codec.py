"""All of a finished game's hand records in one compact value, and back exactly.

A hand's summary and audit as JSON take about 2.7 KB (27 KB for a game to 100, measured on
played games), mostly hex secrets, card names and the same keys thirteen times over; the
issue's aim is 8 KB for a whole game with its indexes. So ``games.hands`` holds, for the whole
game (one row, one compression context: the second hand's keys and shapes cost almost nothing),

    zlib( msgpack( [[over, audit], …] ) ) with a preset dictionary of the records' keys,

where, inside the msgpack:
- a lowercase hex string of 8 bytes or more is stored as its bytes, a non-empty list of card
  names as one extension value of card numbers, and a list of tricks as played (each
  ``{"leader", "cards"}``, each led by the taker of the one before) as one extension value of
  the first leader and the cards;
- a value that the rest of the hand determines is stored as a one-byte-payload "derived"
  marker, and only when recomputing it gives back exactly the value given (same types, same
  key order): the summary's tricks (the audit's finished tricks with each one's taker), the
  audit's commitments (SHA-256 of the revealed secrets, ``protocol.shuffle``), a bot's or an
  absent seat's secret (an HMAC of the server's secret), and the deal (the deck the five
  secrets shuffle). Anything else, or any value that does not match its recomputation (a
  record that would not verify, say), is stored as it is.

These are exact inverses on JSON values (which hold neither bytes nor extension values), so
decoding gives back the very records that were encoded. The recomputations are the fair-deal
protocol's own functions (version 1 of the audit, ``docs/fair-deal.md``); they are fixed for
as long as records of this format are kept. The ``games.hands_format`` column names this
encoding, so a later one can be added beside it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import msgpack

from protocol.cards import DECK_SIZE, card_name, cards_in, is_card_name, parse_card
from protocol.shuffle import (
    SEATS,
    absent_secret,
    bot_secret,
    deal_context,
    deal_hands,
    derive_deck,
    seat_commitment,
    server_commitment,
)
from server.core.rules.hand import trick_winner

FORMAT = 1
CARDS_EXT = 1  # msgpack extension type: a list of card names, one byte (0..51) each
DERIVED_EXT = 2  # msgpack extension type: a value recomputed from the rest of its hand
TRICKS_EXT = 3  # msgpack extension type: an audit's tricks, the first leader and the cards
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
MAX_DECODED = 1 << 23  # a game's records are some tens of KB: refuse to inflate a bomb


class _Derived:
    """Where a value was left out because the rest of its hand recomputes it."""

    def __repr__(self) -> str:
        return "DERIVED"


DERIVED = _Derived()


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON texts would be: same types (1 is not 1.0 nor True), same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# Recomputations, on the records' JSON form (hex strings, card names). Each reads only values
# that are restored before it runs (the order of ``_derivations``); any error means "no".


def _context(inner: dict[str, Any]) -> bytes:
    return deal_context(inner["game"], inner["hand"])


def _server_secret(inner: dict[str, Any]) -> bytes:
    return bytes.fromhex(inner["server_secret"])


def _seat_secret(inner: dict[str, Any], j: int) -> str:
    kind = inner["seats"][j]["kind"]
    make = {"bot": bot_secret, "absent": absent_secret}[kind]
    return make(_context(inner), _server_secret(inner), j).hex()


def _seat_commitment(inner: dict[str, Any], j: int) -> str:
    secret = bytes.fromhex(inner["seats"][j]["secret"])
    return seat_commitment(_context(inner), j, secret).hex()


def _server_commitment(inner: dict[str, Any]) -> str:
    return server_commitment(_context(inner), _server_secret(inner)).hex()


def _deal(inner: dict[str, Any]) -> list[list[str]]:
    secrets = [bytes.fromhex(inner["seats"][j]["secret"]) for j in range(SEATS)]
    deck = derive_deck(_context(inner), _server_secret(inner), secrets)
    return [[card_name(c) for c in cards_in(mask)] for mask in deal_hands(deck)]


def _summary_tricks(inner: dict[str, Any]) -> list[dict[str, Any]]:
    tricks = []
    for trick in inner["tricks"]:
        leader, cards = trick["leader"], trick["cards"]
        if len(cards) != SEATS:
            continue  # a hand ended early: the summary lists finished tricks only
        winner = trick_winner(leader, [parse_card(c) for c in cards])
        tricks.append({"leader": leader, "cards": list(cards), "winner": winner})
    return tricks


# (where the value sits: container getter and key, how to recompute it), in restoring order.
_Slot = tuple[Callable[[Any, Any], Any], Any, Callable[[dict[str, Any]], Any]]


def _derivations(over: Any, audit: Any) -> list[_Slot]:
    inner = audit.get("audit") if isinstance(audit, dict) else None
    if not isinstance(inner, dict) or not isinstance(inner.get("seats"), list):
        return []
    seats = inner["seats"]
    slots: list[_Slot] = []

    def seat_slot(j: int, key: str, make: Callable[[dict[str, Any], int], Any]) -> _Slot:
        return (lambda o, a: a["audit"]["seats"][j], key, lambda i: make(i, j))

    def in_audit(o: Any, a: Any) -> Any:
        return a["audit"]

    if len(seats) == SEATS and all(isinstance(s, dict) for s in seats):
        slots += [seat_slot(j, "secret", _seat_secret) for j in range(SEATS)]
        slots += [seat_slot(j, "commitment", _seat_commitment) for j in range(SEATS)]
        slots.append((in_audit, "deal", _deal))
    slots.append((in_audit, "server_commitment", _server_commitment))
    if isinstance(over, dict):
        slots.append((lambda o, a: o, "tricks", _summary_tricks))
    return slots


def _compact(over: Any, audit: Any) -> tuple[Any, Any]:
    """Copies of the two records with each value that recomputes exactly replaced by DERIVED
    (the originals are left alone)."""
    if not isinstance(audit, dict) or not isinstance(audit.get("audit"), dict):
        return over, audit
    inner = audit["audit"]
    copy_inner = dict(inner)
    if isinstance(inner.get("seats"), list):
        copy_inner["seats"] = [dict(s) if isinstance(s, dict) else s for s in inner["seats"]]
    new_audit = {**audit, "audit": copy_inner}
    new_over = dict(over) if isinstance(over, dict) else over
    for where, key, make in _derivations(over, audit):
        try:
            original = where(over, audit)[key]
            derived = make(inner)
        except Exception:  # not the shape a recomputation reads: keep it as is
            continue
        if _same(original, derived):
            where(new_over, new_audit)[key] = DERIVED
    return new_over, new_audit


def _restore(over: Any, audit: Any) -> None:
    """Put back, in place, every DERIVED value of a decoded hand."""
    for where, key, make in _derivations(over, audit):
        try:
            container = where(over, audit)
            if container.get(key) is not DERIVED:
                continue
        except (KeyError, IndexError, TypeError, AttributeError):
            continue
        try:
            container[key] = make(audit["audit"])
        except Exception as error:
            raise ValueError(f"a hand record's derived {key!r} cannot be recomputed") from error


def _packed_tricks(value: list[Any]) -> bytes | None:
    """An audit's tricks as ``first leader, card, card, …``, when each trick is exactly
    ``{"leader": seat, "cards": [names]}``, all but the last one finished, and each trick led
    by the taker of the one before (as play goes): the leaders after the first are then the
    cards' to say. None for anything else."""
    out = bytearray()
    leader = None
    for k, trick in enumerate(value):
        if not isinstance(trick, dict) or list(trick) != ["leader", "cards"]:
            return None
        seat, cards = trick["leader"], trick["cards"]
        if type(seat) is not int or not 0 <= seat < SEATS or not isinstance(cards, list):
            return None
        if not 1 <= len(cards) <= SEATS or not all(is_card_name(c) for c in cards):
            return None
        if len(cards) < SEATS and k < len(value) - 1:
            return None
        if leader is None:
            out.append(seat)
        elif seat != leader:
            return None
        numbers = [parse_card(c) for c in cards]
        out.extend(numbers)
        leader = trick_winner(seat, numbers) if len(numbers) == SEATS else -1
    return bytes(out) if out else None


def _unpacked_tricks(data: bytes) -> list[dict[str, Any]]:
    if len(data) < 2 or data[0] >= SEATS or any(c >= DECK_SIZE for c in data[1:]):
        raise ValueError("a hand record's tricks are malformed")
    tricks = []
    leader, cards = data[0], data[1:]
    for start in range(0, len(cards), SEATS):
        trick = list(cards[start : start + SEATS])
        tricks.append({"leader": leader, "cards": [card_name(c) for c in trick]})
        if len(trick) == SEATS:
            leader = trick_winner(leader, trick)
    return tricks


def _pack_value(value: Any) -> Any:
    if value is DERIVED:
        return msgpack.ExtType(DERIVED_EXT, b"")
    if isinstance(value, str):
        if len(value) >= 2 * MIN_HEX_BYTES and _HEX.fullmatch(value):
            return bytes.fromhex(value)
        return value
    if isinstance(value, list):
        if value and all(isinstance(v, str) and is_card_name(v) for v in value):
            return msgpack.ExtType(CARDS_EXT, bytes(parse_card(v) for v in value))
        tricks = _packed_tricks(value)
        if tricks is not None:
            return msgpack.ExtType(TRICKS_EXT, tricks)
        return [_pack_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _pack_value(v) for k, v in value.items()}
    return value


def _ext(code: int, data: bytes) -> Any:
    if code == DERIVED_EXT and not data:
        return DERIVED
    if code == TRICKS_EXT:
        return _unpacked_tricks(data)
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


def _no_marker_left(value: Any) -> None:
    if value is DERIVED:
        raise ValueError("a hand record holds a derived value where none can be recomputed")
    if isinstance(value, list):
        for v in value:
            _no_marker_left(v)
    elif isinstance(value, dict):
        for v in value.values():
            _no_marker_left(v)


def encode_hands(hands: Sequence[tuple[Any, Any]]) -> bytes:
    """The stored form of a game's hands: ``(over, audit)`` per hand, in order (JSON values,
    as ``HandRecord`` checked them)."""
    compact = [list(_compact(over, audit)) for over, audit in hands]
    packed = msgpack.packb(_pack_value(compact), use_bin_type=True)
    compressor = zlib.compressobj(9, zdict=_ZDICT)
    return compressor.compress(packed) + compressor.flush()


def decode_hands(data: bytes, format_: int = FORMAT) -> list[tuple[Any, Any]]:
    """The ``(over, audit)`` pairs exactly as they were given to ``encode_hands``."""
    if format_ != FORMAT:
        raise ValueError(f"unknown hand record format {format_}")
    inflater = zlib.decompressobj(zdict=_ZDICT)
    packed = inflater.decompress(data, MAX_DECODED)
    if inflater.unconsumed_tail or not inflater.eof:
        raise ValueError("a game's hand records are truncated or too large")
    value = msgpack.unpackb(packed, raw=False, ext_hook=_ext, strict_map_key=True)
    if not isinstance(value, list) or not all(
        isinstance(h, list) and len(h) == 2 for h in value
    ):
        raise ValueError("a game's hand records are not a list of (summary, audit) pairs")
    hands: list[tuple[Any, Any]] = []
    for packed_over, packed_audit in value:
        over, audit = _unpack_value(packed_over), _unpack_value(packed_audit)
        _restore(over, audit)
        _no_marker_left([over, audit])
        hands.append((over, audit))
    return hands
