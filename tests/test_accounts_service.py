"""The accounts service (``server/accounts.py``) on each store backend, on a clock of its own.

Argon2id runs at its lowest cost here: these tests are about sessions, throttles, names and
passwords, not the hash's strength.
"""

from __future__ import annotations

from argon2 import PasswordHasher

from server.accounts import AccountPolicy, Accounts
from server.store.league import LeagueStore

PASSWORD = "a fine password"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def cheap_hasher() -> PasswordHasher:
    return PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


def service(league: LeagueStore, clock: Clock, policy: AccountPolicy | None = None) -> Accounts:
    return Accounts(league, b"test-secret", clock, policy or AccountPolicy(), cheap_hasher())


async def test_a_session_used_every_0_8_s_with_a_4_s_ttl_lives_on(league: LeagueStore) -> None:
    clock = Clock()
    accounts = service(league, clock, AccountPolicy(session_ttl=4.0))  # renew_after: 1 h
    _, token = await accounts.sign_up("Ann", PASSWORD, "10.0.0.1")
    for k in range(150):  # two minutes
        clock.now += 0.8
        assert await accounts.verify(token) is not None, f"refused after {k * 0.8 + 0.8:.1f} s"
    clock.now += 4.0  # idle for a whole ttl: it ends
    assert await accounts.verify(token) is None
