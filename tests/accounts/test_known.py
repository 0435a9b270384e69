"""What auth reads from the store of record is cached, for a bounded time, and forgotten when
this node changes the account."""

from __future__ import annotations

from typing import Any

from server.accounts import known
from server.accounts.known import KnownAccounts


class Records:
    def __init__(self) -> None:
        self.names: dict[str, str] = {"p1": "Ann"}
        self.taken_ids: set[str] = set()
        self.reads = 0

    async def account(self, player_id: str) -> Any:
        self.reads += 1
        name = self.names.get(player_id)
        return None if name is None else type("Row", (), {"name": name})()

    async def taken(self, player_id: str, name_key: str | None = None) -> bool:
        self.reads += 1
        return player_id in self.taken_ids


async def test_a_name_is_read_once_until_its_time_runs_out() -> None:
    records, now = Records(), [0.0]
    cache = KnownAccounts(records, lambda: now[0])  # type: ignore[arg-type]
    assert await cache.name_of("p1") == "Ann" and await cache.name_of("p1") == "Ann"
    assert records.reads == 1
    del records.names["p1"]  # deleted on another node (whose sessions were revoked)
    now[0] += known.TTL + 0.1
    assert await cache.name_of("p1") is None and records.reads == 2


async def test_a_guest_taken_here_is_refused_at_once() -> None:
    records, now = Records(), [0.0]
    cache = KnownAccounts(records, lambda: now[0])  # type: ignore[arg-type]
    assert await cache.taken("g1", "ann") is False
    records.taken_ids.add("g1")  # another node's sign-up claimed it
    assert await cache.taken("g1", "ann") is False  # trusted for TAKEN_TTL at most
    now[0] += known.TAKEN_TTL + 0.1
    assert await cache.taken("g1", "ann") is True
    records.taken_ids.discard("g1")
    cache.changed("a1")  # this node made an account: every guest is asked about again
    assert await cache.taken("g1", "ann") is False


async def test_a_guest_this_node_just_made_is_not_read_again() -> None:
    records = Records()
    cache = KnownAccounts(records, lambda: 0.0)  # type: ignore[arg-type]
    cache.minted("g2", "bob")
    assert await cache.taken("g2", "bob") is False and records.reads == 0
