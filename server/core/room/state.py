"""The room's whole state: a plain value the store keeps as msgpack bytes.

Everything a node needs to continue a room lives here (seats, options, the game, clocks as
absolute deadlines, who is a bot, who is connected, the event counter), so any node can take any
step of any room, and a node that dies loses nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from operator import attrgetter
from typing import Any

import msgpack

from protocol.errors import HeartsError
from protocol.packer import pack
from server.core.rules import Game, Moon, Revokes, Rules, Tie

BOT_DEFAULT_LEVEL = "strong"
PACES = ("live", "correspondence")


@dataclass(frozen=True, slots=True)
class Clocks:
    """Per-table clock settings in seconds (docs/architecture.md)."""

    grace_play: float = 5.0
    grace_pass: float = 10.0
    bank: float = 30.0
    reconnect: float = 30.0
    boot_window: float = 15.0
    lag_cap: float = 1.0
    bot_think: float = 0.8
    between_hands: float = 5.0  # time to read the end-of-hand summary before the next deal
    shuffle: float = 5.0  # to commit and to reveal a shuffle secret, each
    correspondence_wait: float = 48 * 3600.0


@dataclass(frozen=True, slots=True)
class TableOptions:
    rules: Rules = field(default_factory=Rules)
    pace: str = "live"
    hints: bool = True
    rated: bool = False
    bot_level: str = BOT_DEFAULT_LEVEL
    clocks: Clocks = field(default_factory=Clocks)
    # With no other human seated, the clock boots nobody unless the host turned this on.
    solo_clock: bool = False
    # Its stored value, made once: every commit stores the options, which rarely change (a
    # cache keyed on the options would hash and compare every field on every card).
    _stored: dict[str, Any] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stored", self._value())

    def to_value(self) -> dict[str, Any]:
        """Its stored value (the same object every time). Not to be changed by the caller."""
        return self._stored

    def _value(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_value(),
            "pace": self.pace,
            "hints": self.hints,
            "rated": self.rated,
            "bot_level": self.bot_level,
            "clocks": [getattr(self.clocks, f.name) for f in fields(self.clocks)],  # positional
            "solo_clock": self.solo_clock,
        }

    @classmethod
    def from_value(cls, v: dict[str, Any]) -> TableOptions:
        return cls(
            rules=Rules.from_value(v["rules"]),
            pace=v["pace"],
            hints=v["hints"],
            rated=v["rated"],
            bot_level=v["bot_level"],
            clocks=Clocks(**v["clocks"]) if isinstance(v["clocks"], dict) else Clocks(*v["clocks"]),
            solo_clock=v.get("solo_clock", False),  # absent from states stored before it
        )

    def public(self) -> dict[str, Any]:
        """What every client is shown about the table's options."""
        return {
            "target": self.rules.target,
            "moon": self.rules.moon.value,
            "revokes": self.rules.revokes.value,
            "tie": self.rules.tie.value,
            "pace": self.pace,
            "hints": self.hints and not self.rated,
            "rated": self.rated,
            "clocks": asdict(self.clocks),
            "solo_clock": self.solo_clock,
        }


class OptionError(HeartsError):
    """A house-rule option a client asked for that the table does not offer; says which."""

    def __init__(self, message: str) -> None:
        super().__init__("bad_option", message)


OPTION_VALUES: dict[str, tuple[Any, ...]] = {
    "moon": tuple(m.value for m in Moon),
    "revokes": tuple(r.value for r in Revokes),
    "tie": tuple(t.value for t in Tie),
    "pace": PACES,
    "hints": (True, False),
    "solo_clock": (True, False),  # a table alone with bots: may the clock boot its one human?
}


def _option(raw: dict[str, Any], name: str, allowed: tuple[Any, ...], default: Any) -> Any:
    value = raw.get(name, default)
    # bool is an int in Python: True must not pass for 1, nor 1 for True.
    if not any(type(value) is type(a) and value == a for a in allowed):
        words = ", ".join(str(a).lower() if isinstance(a, bool) else str(a) for a in allowed)
        raise OptionError(f"The option {name} must be one of: {words}.")
    return value


def parse_options(raw: dict[str, Any], *, clocks: Clocks, kind: str) -> TableOptions:
    """Options from a client's room request; OptionError names the bad one and what it allows."""
    known = ("target", *OPTION_VALUES)
    unknown = sorted(str(k) for k in raw if k not in known)
    if unknown:
        raise OptionError(
            f"There is no option {unknown[0][:32]}; the options are {', '.join(known)}."
        )
    target = _option(raw, "target", (50, 100), 100 if kind == "friends" else 50)
    rules = Rules(
        target,
        Moon(_option(raw, "moon", OPTION_VALUES["moon"], Moon.OTHERS_26.value)),
        Revokes(_option(raw, "revokes", OPTION_VALUES["revokes"], Revokes.BLOCKED.value)),
        Tie(_option(raw, "tie", OPTION_VALUES["tie"], Tie.SHARE.value)),
    )
    pace = _option(raw, "pace", PACES, "live")
    hints = _option(raw, "hints", (True, False), True)
    solo_clock = _option(raw, "solo_clock", (True, False), False)
    return TableOptions(rules=rules, pace=pace, hints=hints, clocks=clocks, solo_clock=solo_clock)


@dataclass(slots=True)
class Seat:
    """Who plays a seat now, and that seat's clock."""

    name: str
    player: str | None = None  # the human playing it; None while a bot plays it
    bot: str | None = None  # the bot level playing it
    original: str | None = None  # who sat down at the deal (a player id or "bot:<level>")
    away_since: float | None = None  # when the player's last connection dropped
    bank: float = 0.0  # time bank left this hand
    turn_since: float | None = None  # when this seat's current decision started
    out_of_time_at: float | None = None  # when its bank ran out (bootable from then)
    bot_due: float | None = None  # when the bot playing it acts next
    # The player's open connections ("<node>/<id>"): a player may have several tabs, and the
    # seat is away only when none is open (docs/architecture.md, "Clocks, leaving, bots").
    conns: list[str] = field(default_factory=list)
    shuffle_misses: int = 0  # shuffles in a row this seat failed to commit or reveal in time

    @property
    def is_bot(self) -> bool:
        return self.bot is not None

    @property
    def connected(self) -> bool:
        return bool(self.conns)

    def to_value(self) -> tuple[Any, ...]:
        """Positional, in field order (``Seat(*value)`` restores it): the hot state stays small."""
        return _seat_value(self)

    def copy(self) -> Seat:
        """A copy to change without changing this one. The connection list is shared: a step
        replaces it, never changes it in place (one list fewer per seat and step to copy)."""
        return Seat(*_seat_value(self))


SEAT_FIELDS = tuple(f.name for f in fields(Seat))
_seat_value = attrgetter(*SEAT_FIELDS)  # in C: a commit stores every seat


@dataclass(slots=True)
class RoomState:
    id: str
    kind: str  # "friends" | "quick"
    host: str | None
    options: TableOptions
    seed: bytes  # the room's secret; each hand's server shuffle secret is derived from it
    created: float
    seats: list[Seat | None] = field(default_factory=lambda: [None, None, None, None])
    spectators: list[str] = field(default_factory=list)
    status: str = "open"  # open → playing → finished (→ playing again on a rematch)
    game: Game | None = None
    game_number: int = 0
    seq: int = 0
    next_hand_at: float | None = None
    departures: list[dict[str, Any]] = field(default_factory=list)
    # The outbox of the store of record: finished games (their ids) that the archive has not
    # taken yet. The commit that ends a game adds its id, and its record, in one step.
    unarchived: list[str] = field(default_factory=list)
    # The current hand's commit-reveal shuffle (secrets stay here until the hand's audit).
    shuffle: dict[str, Any] | None = None
    archive_due: float | None = None  # when the shell next offers ``unarchived`` to the archive
    outage_seen: float = 0.0  # the last whole-service outage whose downtime was given back
    game_started: float = 0.0  # when the current (or last) game started
    game_finished: float = 0.0  # when it finished; 0 while it is in play
    # The push outbox (issue 54, ``notices.py``): players to be told that the room needs them.
    # None while empty (every live game whose seats are all at the table).
    push: dict[str, Any] | None = None

    def seat_of(self, player: str) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat is not None and seat.player == player:
                return i
        return None

    @property
    def game_id(self) -> str:
        return f"{self.id}.{self.game_number}"

    # -- storage ---------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        # Positional, in field order (STORED_FIELDS): the names would be about 150 of the
        # state's bytes, written to Redis (and its AOF) on every card.
        value = [
            self.id,
            self.kind,
            self.host,
            self.options.to_value(),
            self.seed,
            self.created,
            [None if s is None else s.to_value() for s in self.seats],
            self.spectators,
            self.status,
            self.game.to_value() if self.game is not None else None,
            self.game_number,
            self.seq,
            self.next_hand_at,
            self.departures,
            self.unarchived,
            self.shuffle,
            self.archive_due,
            self.outage_seen,
            self.game_started,
            self.game_finished,
            self.push,
        ]
        return pack(value)

    @classmethod
    def from_bytes(cls, data: bytes) -> RoomState:
        v = msgpack.unpackb(data, raw=False)
        if isinstance(v, list):  # positional (to_bytes); rooms stored before are a map
            v = dict(zip(STORED_FIELDS, v, strict=False))  # a shorter list: stored before
        unarchived = v.get("unarchived", [])
        if isinstance(unarchived, bool):  # stored before the outbox: a bool "rated_posted"
            unarchived = []
        return cls(
            id=v["id"],
            kind=v["kind"],
            host=v["host"],
            options=TableOptions.from_value(v["options"]),
            seed=v["seed"],
            created=v["created"],
            seats=[None if s is None else _seat_from_value(s) for s in v["seats"]],
            spectators=v["spectators"],
            status=v["status"],
            game=Game.from_value(v["game"]) if v["game"] is not None else None,
            game_number=v["game_number"],
            seq=v["seq"],
            next_hand_at=v["next_hand_at"],
            departures=v["departures"],
            unarchived=unarchived,
            shuffle=_shuffle_from_value(v["shuffle"]),
            outage_seen=v["outage_seen"],
            archive_due=v.get("archive_due"),
            game_started=v.get("game_started", 0.0),
            game_finished=v.get("game_finished", 0.0),
            push=v.get("push"),
        )


# The stored state's fields: RoomState's, in order (to_bytes). A new field goes at the end, and
# from_bytes must then take the shorter list of a state stored before it.
STORED_FIELDS = tuple(f.name for f in fields(RoomState))


# The shuffle's 32-byte values (commitments and secrets) are raw bytes in the state and where
# stored, hex only on the wire and in the audit (views, events): as hex they would double the
# largest part of a state written to Redis on every card, and be converted on every card.
_SHUFFLE_DIGESTS = ("commitments", "secrets")


def _shuffle_from_value(stored: dict[str, Any] | None) -> dict[str, Any] | None:
    """Raw bytes; a room stored before kept them as hex."""
    if stored is None:
        return None
    for name in _SHUFFLE_DIGESTS:
        stored[name] = [bytes.fromhex(x) if isinstance(x, str) else x for x in stored[name]]
    return stored


def _seat_from_value(v: list[Any] | dict[str, Any]) -> Seat:
    if isinstance(v, list):
        return Seat(*v)  # positional, in field order (Seat.to_value): the hot state stays small
    # Rooms stored before: a map, and before presence counted sockets one "conn" and a
    # "connected" flag.
    if "conn" in v:
        conn, connected = v.pop("conn"), v.pop("connected", True)
        v["conns"] = [conn] if connected and conn else []
    return Seat(**v)
