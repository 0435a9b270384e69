"""The accounts service as a node builds it: account rows in a real store of record (SQLite and
a private PostgreSQL, ``record_store``), sessions and throttles in the in-process session store,
on a clock the test moves. Argon2id runs at its lowest cost: these tests are about sessions,
throttles, names and passwords, not the hash's strength."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from argon2 import PasswordHasher

from server.accounts.keys import FixedKey, KeySource
from server.accounts.service import AccountPolicy, Accounts
from server.record.store import RecordStore
from server.store.memory.league import MemoryLeagueStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def cheap_hasher() -> PasswordHasher:
    return PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


async def started(
    records: RecordStore,
    sessions: MemoryLeagueStore,
    clock: Clock,
    policy: AccountPolicy | None = None,
    key: KeySource | None = None,
) -> Accounts:
    accounts = Accounts(
        records, sessions, key or FixedKey(b"test-secret"), clock, policy, cheap_hasher()
    )
    await accounts.start()
    return accounts


MakeService = Callable[..., Awaitable[Accounts]]


@pytest.fixture
def sessions() -> MemoryLeagueStore:
    return MemoryLeagueStore()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make_service(
    record_store: RecordStore, sessions: MemoryLeagueStore, clock: Clock
) -> MakeService:
    """``await make_service(policy=None)``: a started service on this test's stores and clock."""

    async def make(policy: AccountPolicy | None = None) -> Accounts:
        return await started(record_store, sessions, clock, policy)

    return make
