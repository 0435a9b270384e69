"""The fair-deal audit record: what the server publishes after a hand, so anyone can check it.

The record is a JSON object (format in ``docs/fair-deal.md``): bytes as lowercase hex, cards
as names. :func:`build_audit` makes one from the server's own values; :func:`parse_audit`
turns a received one into typed values, or raises :class:`AuditFormatError` naming the first
field that is wrong. Whether the record is *true* (commitments, deal, passes, plays) is
:mod:`protocol.verify`'s business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from protocol.cards import DECK_SIZE, card_name, cards_in, parse_card
from protocol.shuffle import (
    HAND_SIZE,
    SEAT_KINDS,
    SEATS,
    SECRET_SIZE,
    SeatKind,
    SeatSecret,
    deal_context,
    deal_hands,
    derive_deck,
    secrets_for_seats,
    server_commitment,
)

__all__ = [
    "AUDIT_VERSION",
    "PASS_DIRECTIONS",
    "PASS_SIZE",
    "Audit",
    "AuditFormatError",
    "OwnRecord",
    "PassDirection",
    "SeatRecord",
    "TrickRecord",
    "audit_dict",
    "build_audit",
    "parse_audit",
    "parse_own",
    "pass_direction_for",
    "pass_target",
]

AUDIT_VERSION = 1
PASS_SIZE = 3
TRICKS = 13

PassDirection = Literal["left", "right", "across", "none"]
# Index (hand - 1) % 4: hand 1 passes left, 2 right, 3 across, 4 keeps, then again.
PASS_DIRECTIONS: tuple[PassDirection, ...] = ("left", "right", "across", "none")
_PASS_OFFSET: dict[str, int] = {"left": 1, "right": 3, "across": 2, "none": 0}

_KEYS = (
    "v",
    "game",
    "hand",
    "server_commitment",
    "server_secret",
    "seats",
    "deal",
    "pass_direction",
    "passes",
    "tricks",
)
_SEAT_KEYS = ("seat", "kind", "commitment", "secret")
_TRICK_KEYS = ("leader", "cards")


class AuditFormatError(ValueError):
    """The record is not a well-formed version-1 audit record; the message says where."""


def pass_direction_for(hand: int) -> PassDirection:
    """The pass direction of hand number ``hand`` (1-based)."""
    return PASS_DIRECTIONS[(hand - 1) % 4]


def pass_target(seat: int, direction: PassDirection) -> int:
    """The seat that receives ``seat``'s pass: left (s+1)%4, right (s+3)%4, across (s+2)%4."""
    return (seat + _PASS_OFFSET[direction]) % SEATS


@dataclass(frozen=True, slots=True)
class SeatRecord:
    seat: int
    kind: SeatKind
    commitment: bytes | None  # c_j; None for a bot, or an absent seat that never committed
    secret: bytes  # the secret the deck was shuffled by: r_j, b_j or a_j


@dataclass(frozen=True, slots=True)
class TrickRecord:
    leader: int
    cards: tuple[int, ...]  # in play order: the leader's card first, then clockwise (left)


@dataclass(frozen=True, slots=True)
class Audit:
    """A parsed record. Cards are ints in the order the record lists them."""

    game: str
    hand: int
    server_commitment: bytes
    server_secret: bytes
    seats: tuple[SeatRecord, ...]
    deal: tuple[tuple[int, ...], ...]  # each seat's 13 cards before the pass
    pass_direction: PassDirection
    passes: tuple[tuple[int, ...], ...] | None  # the 3 cards each seat passed; None: no pass
    tricks: tuple[TrickRecord, ...]


def audit_dict(audit: Audit) -> dict[str, Any]:
    """The JSON-able form of ``audit`` (hex for bytes, names for cards)."""
    return {
        "v": AUDIT_VERSION,
        "game": audit.game,
        "hand": audit.hand,
        "server_commitment": audit.server_commitment.hex(),
        "server_secret": audit.server_secret.hex(),
        "seats": [
            {
                "seat": s.seat,
                "kind": s.kind,
                "commitment": None if s.commitment is None else s.commitment.hex(),
                "secret": s.secret.hex(),
            }
            for s in audit.seats
        ],
        "deal": [[card_name(c) for c in hand] for hand in audit.deal],
        "pass_direction": audit.pass_direction,
        "passes": (
            None
            if audit.passes is None
            else [[card_name(c) for c in cards] for cards in audit.passes]
        ),
        "tricks": [
            {"leader": t.leader, "cards": [card_name(c) for c in t.cards]} for t in audit.tricks
        ],
    }


def build_audit(
    game_id: str,
    hand: int,
    server_secret: bytes,
    seats: Sequence[SeatSecret],
    passes: Sequence[int] | None,
    tricks: Sequence[tuple[int, Sequence[int]]],
    *,
    deal: Sequence[int] | None = None,
    pass_direction: PassDirection | None = None,
) -> dict[str, Any]:
    """The audit record of one finished hand, ready for ``json.dumps``.

    ``seats``: what each seat contributed (see :class:`protocol.shuffle.SeatSecret`); human
    secrets are checked against their commitments (ValueError if one does not match).
    ``passes``: the card-set bitmask each seat passed, seat 0 first, or None for a no-pass
    hand. ``tricks``: (leader seat, cards in play order) for each trick played, the last one
    possibly short if the hand ended early. ``deal``: the four hands (bitmasks) the server
    dealt; by default re-derived from the secrets. ``pass_direction``: the direction used;
    by default the one for ``hand``.
    """
    ctx = deal_context(game_id, hand)
    used = secrets_for_seats(ctx, server_secret, seats)
    for _, cards in tricks:
        if any(not 0 <= c < DECK_SIZE for c in cards):
            raise ValueError(f"not a card number in a trick: {list(cards)}")
    if deal is None:
        deal = deal_hands(derive_deck(ctx, server_secret, used))
    direction = pass_direction_for(hand) if pass_direction is None else pass_direction
    if direction not in PASS_DIRECTIONS:
        raise ValueError(f"unknown pass direction {direction!r}")
    if (passes is None) != (direction == "none"):
        raise ValueError("passes must be given exactly when the hand has a pass")
    if len(deal) != SEATS or (passes is not None and len(passes) != SEATS):
        raise ValueError("deal and passes need one entry per seat")
    if any(not 0 <= mask < 1 << DECK_SIZE for mask in (*deal, *(passes or ()))):
        raise ValueError("deal and passes must be card-set bitmasks of at most 52 bits")
    record = Audit(
        game=game_id,
        hand=hand,
        server_commitment=server_commitment(ctx, server_secret),
        server_secret=bytes(server_secret),
        seats=tuple(
            SeatRecord(
                seat=j,
                kind=entry.kind,
                commitment=None if entry.commitment is None else bytes(entry.commitment),
                secret=used[j],
            )
            for j, entry in enumerate(seats)
        ),
        deal=tuple(tuple(cards_in(mask)) for mask in deal),
        pass_direction=direction,
        passes=None if passes is None else tuple(tuple(cards_in(mask)) for mask in passes),
        tricks=tuple(TrickRecord(leader, tuple(cards)) for leader, cards in tricks),
    )
    result = audit_dict(record)
    parse_audit(result)  # never hand out a record our own parser would refuse
    return result


# --- parsing -------------------------------------------------------------------------------


def _fail(where: str, message: str) -> AuditFormatError:
    return AuditFormatError(f"{where}: {message}")


def _object(
    value: object, where: str, keys: Sequence[str], optional: Sequence[str] = ()
) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected an object, got {_describe(value)}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise _fail(where, f"missing field {missing[0]!r}")
    # Unknown fields are refused, not ignored: a newer format must say so with "v".
    extra = sorted(str(k) for k in value if k not in keys and k not in optional)
    if extra:
        raise _fail(where, f"unknown field {extra[0]!r}")
    return value


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)}"
    return type(value).__name__


def _int(value: object, where: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail(where, f"expected a whole number, got {_describe(value)}")
    if not low <= value <= high:
        raise _fail(where, f"expected {low}..{high}, got {value}")
    return value


def _hex32(value: object, where: str) -> bytes:
    if not isinstance(value, str) or len(value) != 2 * SECRET_SIZE:
        raise _fail(where, f"expected {2 * SECRET_SIZE} hex digits, got {_describe(value)}")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise _fail(where, f"not hex: {value!r}") from None


def _list(value: object, where: str, low: int, high: int | None = None) -> Sequence[Any]:
    high = low if high is None else high
    if not isinstance(value, list | tuple):
        raise _fail(where, f"expected a list, got {_describe(value)}")
    if not low <= len(value) <= high:
        want = f"{low}" if low == high else f"{low} to {high}"
        raise _fail(where, f"expected {want} entries, got {len(value)}")
    return value


def _cards(value: object, where: str, low: int, high: int | None = None) -> tuple[int, ...]:
    out = []
    for k, name in enumerate(_list(value, where, low, high)):
        try:
            out.append(parse_card(name))
        except ValueError:
            raise _fail(f"{where}[{k}]", f"not a card name: {name!r}") from None
    return tuple(out)


def _seat(value: object, j: int) -> SeatRecord:
    where = f"seats[{j}]"
    obj = _object(value, where, _SEAT_KEYS)
    if _int(obj["seat"], f"{where}.seat", 0, SEATS - 1) != j:
        raise _fail(f"{where}.seat", f"seats must be listed in order, expected {j}")
    kind = obj["kind"]
    if kind not in SEAT_KINDS:
        raise _fail(f"{where}.kind", f"expected one of {', '.join(SEAT_KINDS)}, got {kind!r}")
    commitment = obj["commitment"]
    if commitment is not None:
        commitment = _hex32(commitment, f"{where}.commitment")
    if kind == "human" and commitment is None:
        raise _fail(f"{where}.commitment", "a human seat must have its commitment")
    if kind == "bot" and commitment is not None:
        raise _fail(f"{where}.commitment", "a bot seat has no commitment (C_S covers it): null")
    return SeatRecord(j, kind, commitment, _hex32(obj["secret"], f"{where}.secret"))


def _trick(value: object, t: int, last: bool) -> TrickRecord:
    where = f"tricks[{t}]"
    obj = _object(value, where, _TRICK_KEYS)
    leader = _int(obj["leader"], f"{where}.leader", 0, SEATS - 1)
    # Only the last trick may be short: a revoke call ends the hand at once.
    cards = _cards(obj["cards"], f"{where}.cards", 1 if last else SEATS, SEATS)
    return TrickRecord(leader, cards)


def parse_audit(record: object) -> Audit:
    """Check the shape of a version-1 audit record and return its typed values.

    Raises :class:`AuditFormatError` naming the first bad field. This checks form only
    (types, lengths, hex, card names, seat order); :func:`protocol.verify.verify_audit`
    checks the content.
    """
    obj = _object(record, "audit", _KEYS)
    version = obj["v"]
    if type(version) is not int or version != AUDIT_VERSION:
        raise _fail("v", f"unsupported audit version {version!r}; this verifier reads 1")
    game = obj["game"]
    if not isinstance(game, str):
        raise _fail("game", f"expected a string, got {_describe(game)}")
    hand = _int(obj["hand"], "hand", 1, 0xFFFF_FFFF)
    try:
        deal_context(game, hand)
    except ValueError as exc:
        raise _fail("game", str(exc)) from None
    seats = tuple(_seat(s, j) for j, s in enumerate(_list(obj["seats"], "seats", SEATS)))
    deal = tuple(
        _cards(cards, f"deal[{s}]", HAND_SIZE)
        for s, cards in enumerate(_list(obj["deal"], "deal", SEATS))
    )
    direction = obj["pass_direction"]
    if direction not in PASS_DIRECTIONS:
        raise _fail(
            "pass_direction", f"expected one of {', '.join(PASS_DIRECTIONS)}, got {direction!r}"
        )
    passes: tuple[tuple[int, ...], ...] | None = None
    if direction == "none":
        if obj["passes"] is not None:
            raise _fail("passes", "must be null when pass_direction is none")
    else:
        if obj["passes"] is None:
            raise _fail("passes", f"missing: pass_direction is {direction}")
        passes = tuple(
            _cards(cards, f"passes[{s}]", PASS_SIZE)
            for s, cards in enumerate(_list(obj["passes"], "passes", SEATS))
        )
    raw_tricks = _list(obj["tricks"], "tricks", 0, TRICKS)
    tricks = tuple(_trick(t, k, k == len(raw_tricks) - 1) for k, t in enumerate(raw_tricks))
    return Audit(
        game=game,
        hand=hand,
        server_commitment=_hex32(obj["server_commitment"], "server_commitment"),
        server_secret=_hex32(obj["server_secret"], "server_secret"),
        seats=seats,
        deal=deal,
        pass_direction=direction,
        passes=passes,
        tricks=tricks,
    )


# --- a seat's own record ---------------------------------------------------------------------

_OWN_KEYS = ("seat", "secret", "dealt", "received", "passed", "server_commitment", "commitments")


@dataclass(frozen=True, slots=True)
class OwnRecord:
    """What one seat kept for itself during the hand, to hold the audit against.

    Only ``seat`` and ``secret`` are required; each other field is checked when present.
    """

    seat: int
    secret: bytes  # the r_j this seat drew
    dealt: tuple[int, ...] | None = None  # the 13 cards it was dealt, before the pass
    received: tuple[int, ...] | None = None  # the cards the pass brought it ([] for no pass)
    passed: tuple[int, ...] | None = None  # the cards it passed ([] for no pass)
    server_commitment: bytes | None = None  # the C_S it was shown before revealing
    commitments: tuple[bytes | None, ...] | None = None  # each seat's c_j as it was shown


def parse_own(record: object) -> OwnRecord:
    """Check the shape of a seat's own record (``docs/fair-deal.md``); AuditFormatError if bad."""
    obj = _object(record, "own", _OWN_KEYS[:2], _OWN_KEYS[2:])
    seat = _int(obj["seat"], "own.seat", 0, SEATS - 1)
    secret = _hex32(obj["secret"], "own.secret")
    dealt = received = passed = None
    if obj.get("dealt") is not None:
        dealt = _cards(obj["dealt"], "own.dealt", HAND_SIZE)
    if obj.get("received") is not None:
        received = _cards(obj["received"], "own.received", 0, PASS_SIZE)
    if obj.get("passed") is not None:
        passed = _cards(obj["passed"], "own.passed", 0, PASS_SIZE)
    shown_cs = None
    if obj.get("server_commitment") is not None:
        shown_cs = _hex32(obj["server_commitment"], "own.server_commitment")
    commitments = None
    if obj.get("commitments") is not None:
        commitments = tuple(
            None if c is None else _hex32(c, f"own.commitments[{j}]")
            for j, c in enumerate(_list(obj["commitments"], "own.commitments", SEATS))
        )
    return OwnRecord(seat, secret, dealt, received, passed, shown_cs, commitments)
