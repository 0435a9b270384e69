"""What a room needs from outside before its clocks run: a bot's decision, or the archive.

The room machine decides everything it can by itself. Two things it cannot compute in a step:
a bot's search (CPU-heavy, run by the shell's bot pool) and handing finished games to the
store of record, which also posts their ratings (a database write). A tick asks ``due`` what to
fetch first, the shell fetches it and steps the answer in (``bot_moved``, or
``GamesArchived``), asks again, and ends with ``Tick``: bots whose think time is over move
first, then finished games go to the archive, then the clocks run.

>>> due(state, now, bot_moves=0)  # doctest: +SKIP
BotTurn(seat=2, level='strong', view={...}, seed=...)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from protocol.errors import HeartsError
from server.core.bots.moves import Move, random_move

from .clocks import deciding_seats
from .commands import BotAct, Event
from .game_view import game_view
from .machine import step
from .state import RoomState

BOT_MOVES_PER_TICK = 8  # a tick ends after this many bot moves: the room's actor is not held long


@dataclass(frozen=True, slots=True)
class BotTurn:
    """A bot seat's decision is due: ask ``level`` with exactly this seat's ``view``."""

    seat: int
    level: str
    view: dict[str, Any]
    seed: int  # from the position, so a retried tick asks for, and makes, the same move


@dataclass(frozen=True, slots=True)
class ArchiveDue:
    """These finished games are to be handed to the store of record (``GamesArchived``
    answers)."""

    game_ids: tuple[str, ...]


def due(state: RoomState, now: float, bot_moves: int) -> BotTurn | ArchiveDue | None:
    """What this tick must fetch next, having made ``bot_moves`` bot moves; None: tick."""
    if bot_moves < BOT_MOVES_PER_TICK:
        for i in _bots_due(state, now):
            return _turn(state, i)
    if state.unarchived and state.archive_due is not None and state.archive_due <= now:
        return ArchiveDue(tuple(state.unarchived))
    return None


def due_bots(state: RoomState, now: float, bot_moves: int) -> list[BotTurn]:
    """Every bot decision due now, in the order ``due`` gives them (within the tick's bound):
    more than one only when several seats decide at once (a hand's passes), which the shell
    may ask for together. Each is a function of this state, so a retried tick asks the same."""
    seats = _bots_due(state, now)[: max(0, BOT_MOVES_PER_TICK - bot_moves)]
    return [_turn(state, i) for i in seats]


def _bots_due(state: RoomState, now: float) -> list[int]:
    if state.game is None:
        return []
    return [
        i
        for i in deciding_seats(state)
        if (seat := state.seats[i]) is not None and seat.bot_due is not None and seat.bot_due <= now
    ]


def _turn(state: RoomState, i: int) -> BotTurn:
    seat = state.seats[i]
    assert seat is not None and state.game is not None
    return BotTurn(i, seat.bot or "random", game_view(state.game, i), bot_seed(state, i))


def bot_moved(
    state: RoomState, turn: BotTurn, move: Move, now: float
) -> tuple[RoomState, list[Event]]:
    """Step a bot's move in. A move the rules refuse (a bot's bug) becomes a random legal one,
    so a bot never stalls a table."""
    try:
        return step(state, BotAct(turn.seat, *move), now)
    except HeartsError:
        return step(state, BotAct(turn.seat, *random_move(turn.view, turn.seed)), now)


def bot_seed(state: RoomState, seat: int) -> int:
    """Bots are deterministic per position, so a retried tick makes the same move."""
    digest = hashlib.sha256(state.seed + state.seq.to_bytes(8, "big") + bytes((seat,))).digest()
    return int.from_bytes(digest[:8], "big")
