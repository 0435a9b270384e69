"""Finished games over HTTP: a game's permanent record, a player's whole history paged by key,
their rating history, and the game's page (issue 53; docs/protocol.md "HTTP", and
docs/game-format.md for the document).

Every answer about a game comes from the store of record, which keeps finished games forever;
the room store is asked only whether an id the record lacks is a game in play, and then the
answer is 409 ``game_in_play`` and nothing else about it. An id of the wrong shape is refused
(404 ``game_not_found``) before any store is asked.

>>> routes = game_routes(node.record, node.rooms.load, STATIC / "game.html")  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from protocol.errors import HeartsError, ProtocolError
from protocol.game_file import FORMAT
from server.accounts.keys import KeptKey
from server.core.room.commands import RoomError
from server.core.room.state import RoomState
from server.http.game_cursors import KEY_NAME, GameCursors
from server.http.json_body import refused
from server.record.games import PlayerGame
from server.record.records import MAX_ID, GameRecord
from server.record.store import RecordStore

log = logging.getLogger(__name__)

# A game's id is its room's code and the game's number in the room (``RoomState.game_id``).
GAME_ID = re.compile(r"[A-Za-z0-9_-]{4,40}\.[1-9][0-9]{0,8}")
GAME_MAX_AGE = 600  # seconds: a finished game changes only when a player deletes their account
PAGE, MAX_PAGE = 20, 50  # a player's games per page: by default, at most
HISTORY = 1000  # rating points for a player's plot, newest first: by default and at most
_DIGITS = re.compile(r"[0-9]{1,4}")  # ASCII only: str.isdigit takes "１" and int() reads it

RoomLoader = Callable[[str], Awaitable[RoomState | None]]
"""The room of a code, or None (``RoomService.load``)."""


def game_document(record: GameRecord) -> dict[str, Any]:
    """The game as ``hearts-game/1`` (docs/game-format.md): what the API serves and
    ``hearts-verify`` takes. A hand's ``audit`` is the audit record itself (the room's
    ``hand_audit`` event wraps it in ``{"hand", "audit"}``).

    >>> game_document(record)["seats"][0]  # doctest: +SKIP
    {'seat': 0, 'player': 'p-ann', 'name': 'Ann', 'bot': None, 'rating_before': 1500, ...}
    """
    return {
        "format": FORMAT,
        "game": record.game_id,
        "room": record.room_id,
        "kind": record.kind,
        "options": dict(record.options),
        "started_at": record.started_at,
        "finished_at": record.finished_at,
        "rated": record.rated,
        "scores": list(record.scores),
        "winners": list(record.winners),
        "departures": [
            {k: d.get(k) for k in ("seat", "reason", "hand")} for d in record.departures
        ],
        "seats": [
            {
                "seat": s.seat,
                "player": s.participant,
                "name": s.name,
                "bot": s.bot,
                "rating_before": s.rating_before,
                "rating_after": s.rating_after,
            }
            for s in record.seats
        ],
        "hands": [
            {
                "number": h.number,
                "over": None if h.over is None else dict(h.over),
                "audit": None if h.audit is None else h.audit.get("audit"),
            }
            for h in record.hands
        ],
    }


def game_line(game: PlayerGame) -> dict[str, Any]:
    """One line of a player's list of games (``GET /api/players/ID/games``)."""
    before, after = game.rating_before, game.rating_after
    return {
        "game": game.game_id,
        "finished_at": game.finished_at,
        "kind": game.kind,
        "rated": game.rated,
        "seat": game.seat,
        "scores": list(game.scores),
        "winners": list(game.winners),
        "names": list(game.names),
        "bots": list(game.bots),
        "rating_before": before,
        "rating_after": after,
        "change": None if before is None or after is None else after - before,
    }


def in_play(state: RoomState, game_id: str) -> bool:
    """Whether ``game_id`` is the room's game being played, or a finished one that is still
    waiting in the room's outbox for the store of record."""
    return game_id in state.unarchived or (state.status == "playing" and state.game_id == game_id)


def _no_store(response: Response) -> Response:
    response.headers["cache-control"] = "no-store"
    return response


def _refused(error: HeartsError, status: int | None = None) -> Response:
    answer = refused(error)
    if status is not None:
        answer.status_code = status
    return _no_store(answer)


def _unavailable(what: str, error: Exception) -> Response:
    log.warning("%s could not be read: %r", what, error)
    return _refused(ProtocolError("store_unavailable"), 503)


def _limit(request: Request, default: int, most: int) -> int:
    raw = request.query_params.get("limit")
    if raw is None:
        return default
    if not _DIGITS.fullmatch(raw) or not 1 <= int(raw) <= most:
        raise ProtocolError("bad_field", f"limit must be an integer from 1 to {most}")
    return int(raw)


def _player(request: Request) -> str:
    player: str = request.path_params["player"]
    if not 1 <= len(player) <= MAX_ID:
        raise ProtocolError("bad_field", "not a player id")
    return player


def game_routes(
    records: RecordStore,
    load_room: RoomLoader,
    page: Path,
    clock: Callable[[], float] = time.time,
) -> list[Route]:
    """The routes of finished games, reading ``records`` (and ``load_room`` for "in play")."""
    cursors = GameCursors(KeptKey(records, clock, KEY_NAME))

    async def game(request: Request) -> Response:
        game_id: str = request.path_params["game_id"]
        if not GAME_ID.fullmatch(game_id):
            return _refused(ProtocolError("game_not_found"))
        try:
            record = await records.game(game_id)
            if record is None:
                state = await load_room(game_id.rpartition(".")[0])
                if state is not None and in_play(state, game_id):
                    return _refused(ProtocolError("game_in_play"))
                record = await records.game(game_id)  # it may have been archived meanwhile
        except RoomError as e:
            return _unavailable(f"the room of game {game_id}", e)
        except (SQLAlchemyError, OSError, TimeoutError) as e:
            return _unavailable(f"game {game_id}", e)
        if record is None:
            return _refused(ProtocolError("game_not_found"))
        headers = {"cache-control": f"public, max-age={GAME_MAX_AGE}"}
        if request.query_params.get("download") == "1":
            headers["content-disposition"] = f'attachment; filename="hearts-{game_id}.json"'
        return JSONResponse(game_document(record), headers=headers)

    async def player_games(request: Request) -> Response:
        try:
            player = _player(request)
            limit = _limit(request, PAGE, MAX_PAGE)
            token = request.query_params.get("before") or None
            before = None if token is None else await cursors.open(player, token)
            found = await records.player_games(player, before=before, limit=limit + 1)
            more = len(found) > limit
            lines = found[:limit]
            after = await cursors.seal(player, lines[-1].cursor) if more else None
        except HeartsError as e:
            return _refused(e)
        except (SQLAlchemyError, OSError, TimeoutError) as e:
            return _unavailable(f"the games of {request.path_params['player']!r}", e)
        answer = {"games": [game_line(g) for g in lines], "next": after}
        return JSONResponse(answer, headers={"cache-control": "no-cache"})

    async def ratings(request: Request) -> Response:
        try:
            player = _player(request)
            limit = _limit(request, HISTORY, HISTORY)
            points = await records.rating_history(player, limit)
        except HeartsError as e:
            return _refused(e)
        except (SQLAlchemyError, OSError, TimeoutError) as e:
            return _unavailable(f"the ratings of {request.path_params['player']!r}", e)
        answer = {"player": player, "history": [p.to_value() for p in points]}
        return JSONResponse(answer, headers={"cache-control": "no-cache"})

    async def game_page(request: Request) -> Response:
        if not page.exists():
            return PlainTextResponse("Hearts Live: the game page is not built yet.")
        return FileResponse(page)

    return [
        # ``path``: every id, even one with a slash or none at all, gets the JSON refusal.
        Route("/api/games/{game_id:path}", game),
        Route("/api/players/{player}/games", player_games),
        Route("/api/players/{player}/ratings", ratings),
        Route("/g/{game_id}", game_page),
    ]
