"""What a node recently learned from the store of record about the players it authenticates.

Every ``auth`` (a socket's, or an HTTP bearer) needs one fact from the database: a session's
account name, or whether a guest token's id or name now belongs to an account. Asking the
database each time costs a round trip per auth, about a millisecond, where the session check
in Redis costs microseconds. The facts change rarely and safely:

- an account's name never changes; an account that is deleted has its sessions revoked first
  (``Accounts.delete_account``), so a session check already refuses it — the cached name is
  only the backstop if revoking failed, and lapses after ``ttl``;
- a guest token whose id another node's sign-up claimed, or whose name it took, is still
  accepted here for ``taken_ttl`` at most (this node's own sign-ups and deletions clear it).

>>> known = KnownAccounts(records, time.monotonic)  # doctest: +SKIP
>>> await known.name_of("p-ann")  # doctest: +SKIP
'Ann'
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from server.record.store import RecordStore

TTL = 60.0  # seconds an account's name is trusted
TAKEN_TTL = 5.0  # seconds a guest token's "not taken" is trusted
SIZE = 50_000  # facts kept, the least recently used dropped first

K = TypeVar("K")
V = TypeVar("V")


class _Recent(Generic[K, V]):
    def __init__(self, clock: Callable[[], float], ttl: float, size: int) -> None:
        self._clock, self._ttl, self._size = clock, ttl, size
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()

    async def get(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        now = self._clock()
        entry = self._entries.get(key)
        if entry is not None and entry[0] > now:
            self._entries.move_to_end(key)
            return entry[1]
        value = await load()
        self.put(key, value)
        return value

    def put(self, key: K, value: V) -> None:
        self._entries[key] = (self._clock() + self._ttl, value)
        self._entries.move_to_end(key)
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def forget(self, key: K) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()


class KnownAccounts:
    def __init__(self, records: RecordStore, clock: Callable[[], float]) -> None:
        self.records = records
        self._names: _Recent[str, str | None] = _Recent(clock, TTL, SIZE)
        self._taken: _Recent[tuple[str, str | None], bool] = _Recent(clock, TAKEN_TTL, SIZE)

    async def name_of(self, player_id: str) -> str | None:
        """The account's name, or None if the player has no account."""

        async def load() -> str | None:
            account = await self.records.account(player_id)
            return None if account is None else account.name

        return await self._names.get(player_id, load)

    async def taken(self, player_id: str, name_key: str | None = None) -> bool:
        """``RecordStore.taken``: the id has or had an account, or an account holds the name."""
        return await self._taken.get(
            (player_id, name_key), lambda: self.records.taken(player_id, name_key)
        )

    def minted(self, player_id: str, name_key: str) -> None:
        """This node just made a guest of that id and name, having checked the name: its
        token's first ``auth`` (moments later, on its socket) needs no second read."""
        self._taken.put((player_id, name_key), False)

    def changed(self, player_id: str) -> None:
        """This node made or deleted the player's account: ask the database next time, about
        it and about every guest token (its name may be the new account's)."""
        self._names.forget(player_id)
        self._taken.clear()
