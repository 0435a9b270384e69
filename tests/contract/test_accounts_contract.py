"""The accounts half of the league store: every test runs on the memory and the Redis backend.

A "peer" is another node's view of the same league (another Redis connection pool; for the
in-process store, the same store): what one node revokes, the other refuses at once.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from server.store.accounts import Account, Session
from server.store.league import LeagueStore

if TYPE_CHECKING:
    from tests.conftest import LeagueFactory

DIGEST_A = "a" * 64
DIGEST_B = "b" * 64
TTL = 100.0


def account(pid: str = "p1", key: str = "ann", hashed: str = "$argon2id$one") -> Account:
    return Account(pid, key.title(), key, hashed, 5.0)


async def test_an_account_is_unique_by_name_key_and_by_player(league: LeagueStore) -> None:
    assert await league.account("p1") is None
    assert await league.account_by_name("ann") is None
    assert await league.create_account(account())
    assert await league.account("p1") == account()
    assert await league.account_by_name("ann") == account()
    assert not await league.create_account(account("p2", "ann"))  # the name is taken
    assert not await league.create_account(account("p1", "bob"))  # the player has one
    assert await league.account_by_name("bob") is None
    assert await league.account("p2") is None


async def test_racing_sign_ups_for_one_name_create_one_account(
    league_factory: LeagueFactory,
) -> None:
    league = league_factory()
    peer = league_factory.peer(league)
    results = await asyncio.gather(
        *((league if k % 2 else peer).create_account(account(f"p{k}", "ann")) for k in range(10))
    )
    assert results.count(True) == 1


async def test_a_malformed_account_is_refused(league: LeagueStore) -> None:
    with pytest.raises(ValueError):
        await league.create_account(Account("p1", "Ann", "ann", "", 1.0))
    with pytest.raises(ValueError):
        await league.create_account(Account("", "Ann", "ann", "$h", 1.0))


async def test_sessions_live_until_expiry_and_roll_when_used(league: LeagueStore) -> None:
    await league.create_session(DIGEST_A, "p1", now=1000.0, ttl=TTL)
    assert await league.check_session(DIGEST_A, now=1010.0, ttl=TTL, renew_after=50.0) == Session(
        "p1", 1100.0
    )
    # Past renew_after: the expiry rolls forward to now + ttl.
    assert await league.check_session(DIGEST_A, now=1060.0, ttl=TTL, renew_after=50.0) == Session(
        "p1", 1160.0
    )
    # Within the first quarter of the ttl (renew_after or not), a use does not write.
    assert await league.check_session(DIGEST_A, now=1080.0, ttl=TTL, renew_after=500.0) == Session(
        "p1", 1160.0
    )
    assert await league.check_session(DIGEST_A, now=1160.0, ttl=TTL, renew_after=50.0) is None
    # Expired is gone for good, even if a later check had a clock behind.
    assert await league.check_session(DIGEST_A, now=1000.0, ttl=TTL, renew_after=50.0) is None
    assert await league.check_session(DIGEST_B, now=1000.0, ttl=TTL, renew_after=50.0) is None


async def test_revoking_one_session_leaves_the_other_and_every_node_sees_it(
    league_factory: LeagueFactory,
) -> None:
    league = league_factory()
    peer = league_factory.peer(league)
    await league.create_session(DIGEST_A, "p1", now=0.0, ttl=TTL)
    await league.create_session(DIGEST_B, "p1", now=0.0, ttl=TTL)
    assert await peer.revoke_session(DIGEST_A)
    assert not await peer.revoke_session(DIGEST_A)
    assert await league.check_session(DIGEST_A, now=1.0, ttl=TTL, renew_after=10.0) is None
    assert await league.check_session(DIGEST_B, now=1.0, ttl=TTL, renew_after=10.0) is not None
    assert await peer.revoke_sessions("p1") == 1
    assert await league.check_session(DIGEST_B, now=1.0, ttl=TTL, renew_after=10.0) is None
    assert await league.revoke_sessions("p1") == 0


async def test_a_new_password_revokes_every_session_at_once(league: LeagueStore) -> None:
    assert await league.set_password("p1", "$argon2id$two") == -1  # no such account
    assert await league.create_account(account())
    await league.create_session(DIGEST_A, "p1", now=0.0, ttl=TTL)
    await league.create_session(DIGEST_B, "p1", now=0.0, ttl=TTL)
    await league.create_session("c" * 64, "p2", now=0.0, ttl=TTL)
    assert await league.set_password("p1", "$argon2id$two") == 2
    stored = await league.account_by_name("ann")
    assert stored is not None and stored.password_hash == "$argon2id$two"
    for digest in (DIGEST_A, DIGEST_B):
        assert await league.check_session(digest, now=1.0, ttl=TTL, renew_after=10.0) is None
    assert await league.check_session("c" * 64, now=1.0, ttl=TTL, renew_after=10.0) is not None


async def test_throttle_is_a_sliding_window(league: LeagueStore) -> None:
    for k in range(3):
        assert await league.hit("login:ann", now=100.0 + k, window=10.0, limit=3) == 0.0
    # The fourth within ten seconds waits until the first attempt leaves the window.
    assert await league.hit("login:ann", now=105.0, window=10.0, limit=3) == pytest.approx(5.0)
    assert await league.hit("login:bob", now=105.0, window=10.0, limit=3) == 0.0
    assert await league.hit("login:ann", now=110.0, window=10.0, limit=3) == 0.0
    await league.clear_hits("login:ann")
    for _ in range(3):
        assert await league.hit("login:ann", now=111.0, window=10.0, limit=3) == 0.0


async def test_racing_attempts_never_exceed_the_limit(league_factory: LeagueFactory) -> None:
    league = league_factory()
    peer = league_factory.peer(league)
    waits = await asyncio.gather(
        *((league if k % 2 else peer).hit("x", now=1.0, window=60.0, limit=5) for k in range(20))
    )
    assert waits.count(0.0) == 5


async def test_revocations_are_logged_for_every_node(league_factory: LeagueFactory) -> None:
    league = league_factory()
    peer = league_factory.peer(league)
    start, nothing = await peer.revocations("")
    assert nothing == []
    assert await league.create_account(account())
    for digest in (DIGEST_A, DIGEST_B, "c" * 64, "d" * 64):
        await league.create_session(digest, "p1" if digest != "d" * 64 else "p2", now=0.0, ttl=TTL)
    assert await league.revoke_session(DIGEST_A)
    assert not await league.revoke_session(DIGEST_A)  # nothing revoked, nothing logged
    position, digests = await peer.revocations(start)
    assert digests == [DIGEST_A]
    assert await league.set_password("p1", "$argon2id$new") == 2
    assert await league.revoke_sessions("p2") == 1
    later, digests = await peer.revocations(position)
    assert sorted(digests) == sorted([DIGEST_B, "c" * 64, "d" * 64])
    assert await peer.revocations(later) == (later, [])


async def test_a_short_session_used_often_never_expires(league: LeagueStore) -> None:
    """Renewal is in proportion to the ttl: a renew_after longer than the ttl (the default
    hour against a 4 s session) must not make the ttl an absolute lifetime."""
    await league.create_session(DIGEST_A, "p1", now=0.0, ttl=4.0)
    for k in range(1, 200):  # used every 0.8 s for 159 s
        held = await league.check_session(DIGEST_A, now=k * 0.8, ttl=4.0, renew_after=3600.0)
        assert held is not None, f"refused at {k * 0.8:.1f} s"
        assert held.expires_at - k * 0.8 >= 4.0 * 0.75 - 0.8
    # Left idle for a whole ttl, it ends.
    idle = 200 * 0.8 + 4.0
    assert await league.check_session(DIGEST_A, now=idle, ttl=4.0, renew_after=3600.0) is None
