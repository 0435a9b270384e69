"""What the store of record keeps about one finished game, as checked values.

A ``GameRecord`` is built from whatever hands it in (an outbox entry decoded from bytes, a room's
final state) through ``GameRecord.from_value``, which refuses anything malformed with a
``RecordError`` naming the field: the store writes only records that passed this gate, so a bad
entry is refused before a transaction starts and writes nothing.

The hands are kept as the room produces them (``server/play/rooms.py`` ``archive_of``): per hand,
the data of its ``hand_over`` event (points, scores, tricks with their winners, the shooter) and
of its ``hand_audit`` event (``{"hand": n, "audit": …}``: the deal after the reveal, the passes,
the tricks, every seed secret and commitment), JSON values both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SEATS = 4
MAX_ID = 64  # player, game and room ids (the wire allows 64: protocol/messages.py MAX_ID_CHARS)
MAX_NAME = 64  # shown names (the accounts' rule is stricter: server/accounts/names.py)
MAX_KIND = 32
MAX_HANDS = 200  # far above any real game to 100 (about 10 to 15 hands); bounds a hostile record


class RecordError(ValueError):
    """A record refused before anything was written; the message names the field."""


def text(value: object, what: str, limit: int = MAX_ID) -> str:
    if not isinstance(value, str) or not value or len(value) > limit:
        raise RecordError(f"{what} must be a non-empty string of at most {limit} characters")
    return value


def optional_text(value: object, what: str, limit: int = MAX_NAME) -> str | None:
    return None if value is None else text(value, what, limit)


def integer(value: object, what: str, low: int = -(2**31), high: int = 2**31 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RecordError(f"{what} must be an integer in [{low}, {high}]")
    return value


def optional_integer(value: object, what: str) -> int | None:
    return None if value is None else integer(value, what)


def finite(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RecordError(f"{what} must be a finite number")
    return float(value)


def flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"{what} must be true or false")
    return value


def field(value: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(value, Mapping):
        raise RecordError(f"{where} must be a mapping")
    if key not in value:
        raise RecordError(f"{where} is missing the field {key!r}")
    return value[key]


def json_value(value: object, what: str, depth: int = 0) -> Any:
    """``value`` if it is plain JSON (str keys; no bytes, NaN or sets), else a RecordError."""
    if depth > 32:
        raise RecordError(f"{what} is nested too deeply")
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return finite(value, what)
    if isinstance(value, list | tuple):
        return [json_value(v, what, depth + 1) for v in value]
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise RecordError(f"{what} has a key that is not a string")
        return {k: json_value(v, what, depth + 1) for k, v in value.items()}
    raise RecordError(f"{what} holds a {type(value).__name__}, which JSON cannot keep")


def mapping(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise RecordError(f"{what} must be a mapping")
    checked: dict[str, Any] = json_value(value, what)
    return checked


def seat_list(value: object, what: str, low: int, high: int) -> tuple[int, ...]:
    if not isinstance(value, list | tuple):
        raise RecordError(f"{what} must be a list")
    return tuple(integer(v, what, low, high) for v in value)


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """Who held a seat of a finished game at the deal.

    ``participant`` is the player id, or None for a bot (then ``bot`` is its level) or for a
    deleted account (then ``name`` is None too: the seat shows "a deleted player").
    ``rating_before``/``rating_after`` are the shown (display) ratings in a rated game.
    """

    seat: int
    participant: str | None
    name: str | None
    bot: str | None = None
    rating_before: int | None = None
    rating_after: int | None = None

    @classmethod
    def from_value(cls, value: Mapping[str, Any], where: str = "seat") -> SeatRecord:
        seat = cls(
            seat=integer(field(value, "seat", where), f"{where}.seat", 0, SEATS - 1),
            participant=optional_text(field(value, "participant", where), f"{where}.participant"),
            name=optional_text(field(value, "name", where), f"{where}.name"),
            bot=optional_text(value.get("bot"), f"{where}.bot", MAX_KIND),
            rating_before=optional_integer(value.get("rating_before"), f"{where}.rating_before"),
            rating_after=optional_integer(value.get("rating_after"), f"{where}.rating_after"),
        )
        if seat.bot is not None and seat.participant is not None:
            raise RecordError(f"{where}: a bot seat has no participant id")
        return seat

    def to_value(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "participant": self.participant,
            "name": self.name,
            "bot": self.bot,
            "rating_before": self.rating_before,
            "rating_after": self.rating_after,
        }


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One finished hand: its ``hand_over`` and ``hand_audit`` events' data (either may be
    missing, never both: a game ended mid-hand has an audit and no summary)."""

    number: int
    over: Mapping[str, Any] | None
    audit: Mapping[str, Any] | None

    @classmethod
    def from_value(cls, value: Mapping[str, Any], where: str = "hand") -> HandRecord:
        number = integer(field(value, "number", where), f"{where}.number", 1, MAX_HANDS)
        over, audit = field(value, "over", where), field(value, "audit", where)
        hand = cls(
            number,
            None if over is None else mapping(over, f"{where}.over"),
            None if audit is None else mapping(audit, f"{where}.audit"),
        )
        if hand.over is None and hand.audit is None:
            raise RecordError(f"{where} has neither a summary nor an audit")
        for kind, record in (("over", hand.over), ("audit", hand.audit)):
            if record is not None and record.get("hand") != number:
                raise RecordError(f"{where}.{kind} is about another hand than {number}")
        return hand

    def to_value(self) -> dict[str, Any]:
        return {"number": self.number, "over": self.over, "audit": self.audit}


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A finished game as the store of record keeps it, forever."""

    game_id: str
    room_id: str
    kind: str  # the room's kind: "friends", "quick"…
    options: Mapping[str, Any]  # the table's public options (TableOptions.public())
    started_at: float  # epoch seconds on the nodes' shared clock
    finished_at: float
    scores: tuple[int, ...]  # final scores, seat order
    winners: tuple[int, ...]  # seats
    rated: bool
    departures: tuple[Mapping[str, Any], ...]  # the room's departure records, as they are
    seats: tuple[SeatRecord, ...]  # seat order
    hands: tuple[HandRecord, ...]  # numbered 1, 2, … in order

    @classmethod
    def from_value(cls, value: Mapping[str, Any]) -> GameRecord:
        """The checked record, or a RecordError naming the first bad field."""
        w = "game"
        game_id = text(field(value, "game_id", w), "game.game_id")
        w = f"game {game_id}"
        departures = field(value, "departures", w)
        seats, hands = field(value, "seats", w), field(value, "hands", w)
        if not isinstance(departures, list | tuple):
            raise RecordError(f"{w}.departures must be a list")
        if not isinstance(seats, list | tuple) or len(seats) != SEATS:
            raise RecordError(f"{w}.seats must list {SEATS} seats")
        if not isinstance(hands, list | tuple) or len(hands) > MAX_HANDS:
            raise RecordError(f"{w}.hands must be a list of at most {MAX_HANDS} hands")
        record = cls(
            game_id=game_id,
            room_id=text(field(value, "room_id", w), f"{w}.room_id"),
            kind=text(field(value, "kind", w), f"{w}.kind", MAX_KIND),
            options=mapping(field(value, "options", w), f"{w}.options"),
            started_at=finite(field(value, "started_at", w), f"{w}.started_at"),
            finished_at=finite(field(value, "finished_at", w), f"{w}.finished_at"),
            scores=seat_list(field(value, "scores", w), f"{w}.scores", -(2**15), 2**15 - 1),
            winners=seat_list(field(value, "winners", w), f"{w}.winners", 0, SEATS - 1),
            rated=flag(field(value, "rated", w), f"{w}.rated"),
            departures=tuple(mapping(d, f"{w}.departures") for d in departures),
            seats=tuple(SeatRecord.from_value(s, f"{w}.seats[{i}]") for i, s in enumerate(seats)),
            hands=tuple(HandRecord.from_value(h, f"{w}.hands[{i}]") for i, h in enumerate(hands)),
        )
        record.check()
        return record

    def check(self) -> None:
        """The rules between fields (``from_value`` runs it; so does the store)."""
        w = f"game {self.game_id}"
        if len(self.scores) != SEATS:
            raise RecordError(f"{w}.scores must have {SEATS} entries")
        if [s.seat for s in self.seats] != list(range(SEATS)):
            raise RecordError(f"{w}.seats must be seats 0 to {SEATS - 1} in order")
        people = [s.participant for s in self.seats if s.participant is not None]
        if len(set(people)) != len(people):
            raise RecordError(f"{w}: a player cannot hold two seats")
        if [h.number for h in self.hands] != list(range(1, len(self.hands) + 1)):
            raise RecordError(f"{w}.hands must be numbered 1, 2, … in order")
        if self.finished_at < self.started_at:
            raise RecordError(f"{w} finished before it started")

    def to_value(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "room_id": self.room_id,
            "kind": self.kind,
            "options": self.options,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "scores": list(self.scores),
            "winners": list(self.winners),
            "rated": self.rated,
            "departures": list(self.departures),
            "seats": [s.to_value() for s in self.seats],
            "hands": [h.to_value() for h in self.hands],
        }


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One participant's rating change in a game, posted with the game's record.

    ``version`` is the version the caller read (``RecordStore.ratings``); the post writes
    ``version + 1`` and only if the stored one is still ``version`` (compare-and-set), so two
    games sharing a player never overwrite each other's update. ``games`` counts rated games
    after this one.
    """

    player_id: str
    version: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    games: int

    def check(self) -> None:
        text(self.player_id, "rating change.player_id")
        integer(self.version, f"rating change of {self.player_id}.version", 0)
        integer(self.games, f"rating change of {self.player_id}.games", 1)
        for what in ("mu_before", "sigma_before", "mu_after", "sigma_after"):
            finite(getattr(self, what), f"rating change of {self.player_id}.{what}")
        if self.sigma_before <= 0 or self.sigma_after <= 0:
            raise RecordError(f"rating change of {self.player_id}: sigma must be positive")


def check_changes(record: GameRecord, changes: Sequence[RatingChange]) -> None:
    for change in changes:
        change.check()
    players = [c.player_id for c in changes]
    if len(set(players)) != len(players):
        raise RecordError(f"game {record.game_id}: a player's rating changes twice")
    seated = {s.participant for s in record.seats}
    if not set(players) <= seated:
        raise RecordError(f"game {record.game_id}: a rating change for a player not seated")
    if changes and not record.rated:
        raise RecordError(f"game {record.game_id} is not rated but has rating changes")
