"""What the room state machine takes and gives: its commands, its events, its refusal.

Every command is a frozen dataclass the shell builds from a validated client message, a timer or
the matchmaker; ``server.core.room.machine.step`` applies one and returns the events it caused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol.errors import HeartsError

ALL = -1
"""Event audience: everyone in the room (seats and spectators). 0..3: that seat only."""


class RoomError(HeartsError):
    """A command the room refuses (or could not run); the room is unchanged."""


@dataclass(frozen=True, slots=True)
class Event:
    audience: int
    type: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Join:
    player: str
    name: str
    conn: str = ""


@dataclass(frozen=True, slots=True)
class Leave:
    player: str


@dataclass(frozen=True, slots=True)
class Connect:
    player: str
    conn: str


@dataclass(frozen=True, slots=True)
class Disconnect:
    player: str
    conn: str


@dataclass(frozen=True, slots=True)
class DropNode:
    """Every connection held by the server node ``node`` is gone (the node died)."""

    node: str


@dataclass(frozen=True, slots=True)
class FillBots:
    player: str
    level: str | None = None


@dataclass(frozen=True, slots=True)
class Start:
    player: str


@dataclass(frozen=True, slots=True)
class Rematch:
    player: str


@dataclass(frozen=True, slots=True)
class PassCards:
    player: str
    cards: int
    lag: float = 0.0


@dataclass(frozen=True, slots=True)
class PlayCard:
    player: str
    card: int
    lag: float = 0.0


@dataclass(frozen=True, slots=True)
class ChooseMoon:
    player: str
    choice: str
    lag: float = 0.0


@dataclass(frozen=True, slots=True)
class CallRevoke:
    player: str
    accused: int


@dataclass(frozen=True, slots=True)
class CommitSecret:
    player: str
    commitment: bytes


@dataclass(frozen=True, slots=True)
class RevealSecret:
    player: str
    secret: bytes


@dataclass(frozen=True, slots=True)
class Boot:
    player: str
    seat: int


@dataclass(frozen=True, slots=True)
class EndGame:
    """Correspondence pace: a seat ends a game that has waited too long on another seat."""

    player: str


@dataclass(frozen=True, slots=True)
class BotAct:
    """A bot's decision, computed by the shell from the seat's view (bots are slow, steps not)."""

    seat: int
    action: str  # "pass" | "play" | "moon"
    value: Any  # a card set, a card, or a moon choice


@dataclass(frozen=True, slots=True)
class Tick:
    """Timers: deal the next hand, run out banks, auto-boot, replace silent seats."""


@dataclass(frozen=True, slots=True)
class ShiftClocks:
    """After a whole-service outage ending at ``outage``: push every deadline back by ``delta``."""

    outage: float
    delta: float


@dataclass(frozen=True, slots=True)
class ArchivedGame:
    """A finished game the store of record has kept, with its per-seat rating changes if it
    was rated (the ``ratings`` event's seats), else None."""

    game_id: str
    seats: tuple[dict[str, Any] | None, ...] | None = None


@dataclass(frozen=True, slots=True)
class GamesArchived:
    """The store of record took these of the room's ``unarchived`` games; ``games`` None: it
    could not (an outage), ask again at ``retry_at``."""

    games: tuple[ArchivedGame, ...] | None
    retry_at: float | None = None


@dataclass(frozen=True, slots=True)
class NoticesTaken:
    """The shell took these notices of the push outbox to send (each stays, leased until
    ``retry`` × 2^attempts from now) and dropped those (``core/room/notices.py``)."""

    keys: tuple[str, ...]
    drop: tuple[str, ...] = ()
    retry: float = 15.0


@dataclass(frozen=True, slots=True)
class NoticesSent:
    """These ``(player, key)`` pushes were delivered, or can never be: out of the outbox, and
    no other push to those players from this room for ``interval`` seconds."""

    done: tuple[tuple[str, str], ...]
    interval: float = 60.0


@dataclass(frozen=True, slots=True)
class SeatPlayers:
    """Quick play: the matchmaker seats four entries (a player id and name, or a bot level)."""

    seats: tuple[tuple[str | None, str, str | None], ...]  # (player, name, bot level)


Command = (
    Join
    | Leave
    | Connect
    | Disconnect
    | DropNode
    | FillBots
    | Start
    | Rematch
    | PassCards
    | PlayCard
    | ChooseMoon
    | CallRevoke
    | Boot
    | BotAct
    | Tick
    | SeatPlayers
    | CommitSecret
    | RevealSecret
    | EndGame
    | ShiftClocks
    | GamesArchived
    | NoticesTaken
    | NoticesSent
)
