"""What a connection and quick play need of the node that holds them, as interfaces.

``server.app.Node`` provides these; ``server.net.connection`` and ``server.play.quickplay`` depend
on the interfaces only, so neither imports the app and no module imports back the one that
imports it.
"""

from __future__ import annotations

from typing import Any, Protocol

from server.accounts.identity import Identity
from server.accounts.service import Accounts
from server.config import Settings
from server.fanout.hub import Hub
from server.play.rooms import RoomService
from server.store import RoomStore


class Member(Protocol):
    """A connection as quick play sees it: who it is, and how to seat it and tell it things."""

    identity: Identity | None

    async def enter(self, room: str, resume_from: int | None) -> dict[str, Any]: ...

    def push(self, message: dict[str, Any]) -> None: ...


class Lobby(Protocol):
    """Quick play as a connection sees it."""

    async def join(self, conn: Member, target: int) -> dict[str, Any]: ...

    async def leave(self, conn: Member) -> bool: ...


class Ladder(Protocol):
    """The ladder as a connection asks for it."""

    async def ladder(self, player: str | None, limit: int) -> dict[str, Any]: ...


class NodeServices(Protocol):
    """The node's parts a connection or quick play uses (read-only, hence properties)."""

    @property
    def id(self) -> str: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def store(self) -> RoomStore: ...

    @property
    def rooms(self) -> RoomService: ...

    @property
    def hub(self) -> Hub: ...

    @property
    def accounts(self) -> Accounts: ...

    @property
    def quickplay(self) -> Lobby: ...

    @property
    def standings(self) -> Ladder: ...

    def invite_link(self, room: str) -> str: ...

    async def hint(self, room: str, player: str) -> dict[str, Any]: ...
