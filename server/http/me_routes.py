"""``GET /api/me/games``: every room where the player holds a seat (docs/protocol.md).

Read from the players' index of rooms kept beside the rooms (``RoomStore.seated_rooms``,
maintained by the room service's commits), each room checked against its state, and shown by
``server/core/room/listing.py``: your turn first, then the longest waiting.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from protocol.errors import HeartsError, ProtocolError
from server.accounts.identity import Identity
from server.core.room.listing import by_urgency, listing
from server.http.json_body import refused
from server.play.rooms import RoomService

MAX_GAMES = 50


def me_routes(
    rooms: RoomService,
    who: Callable[[Request], Awaitable[Identity | None]],
    clock: Callable[[], float],
) -> list[Route]:
    async def my_games(request: Request) -> Response:
        identity = await who(request)
        if identity is None:
            return refused(ProtocolError("bad_token", "Send Authorization: Bearer <token>."))
        try:
            states = await rooms.seated_rooms(identity.player)
        except HeartsError as e:
            return refused(e)
        now = clock()
        entries = [g for s in states if (g := listing(s, identity.player, now)) is not None]
        games = by_urgency(entries)[:MAX_GAMES]
        return JSONResponse(
            {"games": games, "your_turn": sum(1 for g in games if g["your_turn"]), "now": now},
            headers={"cache-control": "no-store"},
        )

    return [Route("/api/me/games", my_games)]
