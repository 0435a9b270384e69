"""The session store (sessions, revocations, throttles; the league store's base): every test
runs on the memory and the Redis backend.

A "peer" is another node's view of the same league (another Redis connection pool; for the
in-process store, the same store): what one node revokes, the other refuses at once.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from server.store.league import LeagueStore
from server.store.sessions import Session

if TYPE_CHECKING:
    from tests.conftest import LeagueFactory

DIGEST_A = "a" * 64
DIGEST_B = "b" * 64
TTL = 100.0


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


async def test_revoking_a_players_sessions_ends_all_of_them_and_no_one_elses(
    league: LeagueStore,
) -> None:
    assert await league.revoke_sessions("p1") == 0  # nobody's sessions
    await league.create_session(DIGEST_A, "p1", now=0.0, ttl=TTL)
    await league.create_session(DIGEST_B, "p1", now=0.0, ttl=TTL)
    await league.create_session("c" * 64, "p2", now=0.0, ttl=TTL)
    assert await league.revoke_sessions("p1") == 2
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
    for digest in (DIGEST_A, DIGEST_B, "c" * 64, "d" * 64):
        await league.create_session(digest, "p1" if digest != "d" * 64 else "p2", now=0.0, ttl=TTL)
    assert await league.revoke_session(DIGEST_A)
    assert not await league.revoke_session(DIGEST_A)  # nothing revoked, nothing logged
    position, digests = await peer.revocations(start)
    assert digests == [DIGEST_A]
    assert await league.revoke_sessions("p1") == 2
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
