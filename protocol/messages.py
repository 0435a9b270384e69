"""Client commands: their fields, and validation of every incoming message before anything acts.

A command is a map ``{"type": T, "id": ID, ...fields}``. ``id`` is the client's (a string of at
most 64 characters, or an integer from -2**63 to 2**64 - 1, the range msgpack carries) and comes
back as ``re`` in the ``ok`` or ``error`` answer.
``parse_command`` turns a decoded map into a ``Command`` or raises ``ProtocolError``; fields are
converted on the way in (card names to card numbers, a pass to a card set).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cards import is_card_name, parse_card
from .errors import ProtocolError

ROOM_CODE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
BOT_LEVELS = ("random", "basic", "normal", "strong")
MOON_CHOICES = ("others_26", "shooter_minus_26")

Check = Callable[[str, Any], Any]
MAX_ID_CHARS = 64
ID_MIN, ID_MAX = -(2**63), 2**64 - 1


def _string(max_len: int) -> Check:
    def check(name: str, value: Any) -> str:
        if not isinstance(value, str) or not 0 < len(value) <= max_len:
            raise ProtocolError(
                "bad_field", f"{name} must be a string of 1 to {max_len} characters."
            )
        return value

    return check


def _room_code(name: str, value: Any) -> str:
    if not isinstance(value, str) or not 4 <= len(value) <= 40 or not set(value) <= ROOM_CODE_CHARS:
        raise ProtocolError("bad_field", f"{name} must be a room code.")
    return value


def _int(lo: int, hi: int) -> Check:
    def check(name: str, value: Any) -> int:
        if type(value) is not int or not lo <= value <= hi:
            raise ProtocolError("bad_field", f"{name} must be an integer from {lo} to {hi}.")
        return value

    return check


def _number(name: str, value: Any) -> float:
    if type(value) not in (int, float) or value != value or abs(value) > 1e15:
        raise ProtocolError("bad_field", f"{name} must be a number.")
    return float(value)


def _choice(*allowed: object) -> Check:
    def check(name: str, value: Any) -> Any:
        if value not in allowed or type(value) is bool:
            listed = ", ".join(map(str, allowed))
            raise ProtocolError("bad_field", f"{name} must be one of {listed}.")
        return value

    return check


def _card(name: str, value: Any) -> int:
    if not is_card_name(value):
        raise ProtocolError("bad_field", f"{name} must be a card name like 2C, TD, QS or AH.")
    return parse_card(value)


def _three_cards(name: str, value: Any) -> int:
    if not isinstance(value, list) or len(value) != 3:
        raise ProtocolError("bad_field", f"{name} must be a list of three card names.")
    mask = 0
    for item in value:
        mask |= 1 << _card(name, item)
    if mask.bit_count() != 3:
        raise ProtocolError("bad_field", f"{name} must name three different cards.")
    return mask


def _hex32(name: str, value: Any) -> bytes:
    if not isinstance(value, str) or len(value) != 64:
        raise ProtocolError("bad_field", f"{name} must be 64 hex digits (32 bytes).")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise ProtocolError("bad_field", f"{name} must be 64 hex digits (32 bytes).") from None


def _options(name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > 16:
        raise ProtocolError("bad_field", f"{name} must be a map of house-rule options.")
    return value  # each option is checked by the room, which knows the allowed values


_SEAT = _int(0, 3)

COMMANDS: dict[str, dict[str, tuple[Check, bool]]] = {
    # type: {field: (check, required)}
    "auth": {"token": (_string(512), True)},
    "join": {"room": (_room_code, True)},
    "resume": {"room": (_room_code, True), "seq": (_int(0, 2**53), True)},
    "view": {},
    "leave": {},
    "fill_bots": {"level": (_choice(*BOT_LEVELS), False)},
    "start": {},
    "pass": {"cards": (_three_cards, True)},
    "play": {"card": (_card, True)},
    "moon": {"choice": (_choice(*MOON_CHOICES), True)},
    "revoke": {"seat": (_SEAT, True)},
    "boot": {"seat": (_SEAT, True)},
    "rematch": {},
    "end_game": {},
    "hint": {},
    "ping": {"t": (_number, False)},
    "open_room": {"options": (_options, False)},
    "commit": {"commitment": (_hex32, True)},
    "reveal": {"secret": (_hex32, True)},
    "audit": {"hand": (_int(1, 100_000), True)},
    "queue": {"target": (_choice(50, 100), True)},
    "unqueue": {},
    "ladder": {"limit": (_int(1, 100), False)},
}


@dataclass(frozen=True, slots=True)
class Command:
    type: str
    id: str | int
    args: dict[str, Any] = field(default_factory=dict)


def command_id(message: dict[str, Any]) -> str | int | None:
    """The message's id if it is a usable one (so an error can name it), else None."""
    cid = message.get("id")
    if isinstance(cid, str) and len(cid) <= MAX_ID_CHARS:
        return cid
    if type(cid) is int and ID_MIN <= cid <= ID_MAX:
        return cid
    return None


def parse_command(message: dict[str, Any]) -> Command:
    """Validate a decoded message; ProtocolError names what is wrong."""
    kind = message.get("type")
    if not isinstance(kind, str):
        raise ProtocolError("bad_field", "Every message needs a string type.")
    cid = command_id(message)
    if cid is None:
        raise ProtocolError(
            "bad_field",
            f"Every command needs an id: a string of at most {MAX_ID_CHARS} characters "
            "or a 64-bit integer.",
        )
    spec = COMMANDS.get(kind)
    if spec is None:
        raise ProtocolError("unknown_type", f"Unknown message type {kind[:32]!r}.")
    args: dict[str, Any] = {}
    for name, value in message.items():
        if name in ("type", "id"):
            continue
        if name not in spec:
            raise ProtocolError("bad_field", f"{kind} has no field {str(name)[:32]!r}.")
        args[name] = spec[name][0](name, value)
    for name, (_check, required) in spec.items():
        if required and name not in args:
            raise ProtocolError("bad_field", f"{kind} needs the field {name!r}.")
    return Command(kind, cid, args)
