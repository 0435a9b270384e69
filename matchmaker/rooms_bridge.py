"""The matchmaker's callbacks into the room service: open a seated rated room, or abandon one.

Used by a server node's in-process matchmaker and by ``python -m matchmaker`` alike::

    bridge = RoomsBridge(room_service, league, clocks=settings.clocks)
    Matchmaker(league, room_store, bridge.create_table, abandon_table=bridge.abandon_table, ...)
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence

from matchmaker.matching import Table
from server.core.bots.levels import BOT_LEVELS, DEFAULT_LEVEL
from server.core.ratings import display_rating
from server.core.ratings.anchors import anchor_rating
from server.core.room.bot_names import bot_name
from server.core.room.commands import SeatPlayers
from server.core.room.state import Clocks, TableOptions
from server.core.rules import Rules
from server.play.rooms import RoomService
from server.store.league import LeagueStore

# Bot levels in order of preference when their ratings are equally close (e.g. all new).
_LEVEL_PREFERENCE = (DEFAULT_LEVEL, *(lvl for lvl in BOT_LEVELS if lvl != DEFAULT_LEVEL))

SeatSpec = tuple[str | None, str, str | None]  # (player id, name, bot level), as SeatPlayers


class RoomsBridge:
    def __init__(
        self, rooms: RoomService, league: LeagueStore, *, clocks: Clocks | None = None
    ) -> None:
        self.rooms = rooms
        self.league = league
        self.clocks = clocks or Clocks()

    async def bot_levels(self, wanted: Sequence[int]) -> list[str]:
        """For each wanted display rating, the bot level whose anchor rating is closest."""
        if not wanted:
            return []
        shown = {level: display_rating(anchor_rating(level)) for level in BOT_LEVELS}
        # min keeps the first of equally close levels, so ties follow _LEVEL_PREFERENCE.
        return [min(_LEVEL_PREFERENCE, key=lambda lvl: abs(shown[lvl] - w)) for w in wanted]

    async def create_table(self, table: Table, names: Mapping[str, str]) -> str:
        """A new rated quick-play room with the table's players and bots seated; its id.

        Seats are shuffled (a CSPRNG, like everything that shapes a deal), so humans and bots
        do not always sit in the same places. The game starts at once; the players'
        connections join it when their nodes pick up their assignments.
        """
        levels = await self.bot_levels(table.bot_ratings)
        seats: list[SeatSpec] = [
            (pid, names.get(pid) or "Player", None) for pid in table.player_ids
        ]
        seats += [(None, "", level) for level in levels]
        order = list(range(len(seats)))
        secrets.SystemRandom().shuffle(order)
        placed: list[SeatSpec] = []
        offset = secrets.randbelow(1 << 16)
        for k in order:
            player, name, level = seats[k]
            if level is not None:
                name = bot_name(offset, [n for _, n, _ in seats if n] + [n for _, n, _ in placed])
            placed.append((player, name, level))
        options = TableOptions(rules=Rules(table.target), rated=True, clocks=self.clocks)
        state = await self.rooms.create(kind="quick", host=None, host_name=None, options=options)
        try:
            await self.rooms.apply(state.id, SeatPlayers(seats=tuple(placed)))
        except BaseException:
            await self.abandon_table(state.id)
            raise
        return state.id

    async def abandon_table(self, room_id: str) -> None:
        """Delete the room: nobody was told of it, so nobody is in it (idempotent)."""
        await self.rooms.store.delete_room(room_id)
