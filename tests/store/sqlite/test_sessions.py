"""Sessions journaled by the embedded node: a token issued before a restart still works, a
revoked or expired one stays refused, and the revocation log goes on where it was."""

from __future__ import annotations

import time
from pathlib import Path

from server.store import open_league_store
from server.store.memory.league import MemoryLeagueStore
from server.store.sessions import REVOCATION_LOG, SessionStore
from server.store.sqlite import open_league_store as open_journaled
from server.store.sqlite import open_room_store

TTL = 3600.0


async def check(store: SessionStore, digest: str, now: float) -> str | None:
    session = await store.check_session(digest, now=now, ttl=TTL, renew_after=600.0)
    return None if session is None else session.player_id


async def test_sessions_and_revocations_outlive_the_store(tmp_path: Path) -> None:
    now = time.time()
    store = open_journaled(tmp_path)
    for k, player in enumerate(("alice", "alice", "bob", "carol", "dave")):
        await store.create_session(f"d{k}", player, now=now, ttl=TTL)
    position, _ = await store.revocations("")
    assert await store.revoke_session("d2")  # bob logs out
    assert await store.revoke_sessions("alice") == 2  # alice ends all of hers
    assert await check(store, "d3", now + TTL - 1) == "carol"  # used late: renewed
    await store.close()

    again = open_journaled(tmp_path)
    try:
        assert await check(again, "d4", now) == "dave"
        assert await check(again, "d3", now + TTL + 60) == "carol"  # the renewal was kept
        assert await check(again, "d4", now + TTL + 60) is None  # dave's ran out
        for revoked in ("d0", "d1", "d2"):
            assert await check(again, revoked, now) is None
        assert not await again.revoke_session("d2")
        assert await again.revocations(position) == ("3", ["d2", "d0", "d1"])
        assert await again.revoke_sessions("carol") == 1
        assert await again.revocations("3") == ("4", ["d3"])
    finally:
        await again.close()


async def test_an_expired_session_is_not_restored(tmp_path: Path) -> None:
    now = time.time()
    store = open_journaled(tmp_path)
    await store.create_session("old", "p1", now=now - TTL - 1, ttl=TTL)
    await store.create_session("new", "p1", now=now, ttl=TTL)
    await store.close()
    again = open_journaled(tmp_path)
    try:
        assert await check(again, "old", now - TTL - 0.5) is None  # dropped when reopened
        assert await check(again, "new", now) == "p1"
        assert await again.revoke_sessions("p1") == 1
    finally:
        await again.close()


async def test_the_revocation_log_keeps_its_latest_entries(tmp_path: Path) -> None:
    now = time.time()
    store = open_journaled(tmp_path)
    count = REVOCATION_LOG + 5
    for k in range(count):
        await store.create_session(f"d{k}", "p", now=now, ttl=TTL)
    assert await store.revoke_sessions("p") == count
    newest = await store.revocations("4")
    await store.close()
    again = open_journaled(tmp_path)
    try:
        assert await again.revocations("4") == newest
        assert newest[0] == str(count) and len(newest[1]) == REVOCATION_LOG
    finally:
        await again.close()


async def test_the_room_store_and_the_league_share_the_journal(tmp_path: Path) -> None:
    rooms = open_room_store(tmp_path)  # holds the folder's lock; sessions do not need it
    league = open_league_store(None, data_dir=tmp_path)
    await league.create_session("d", "p", now=time.time(), ttl=TTL)
    await rooms.create_room("r1", b"v1", [], None)
    await league.close()
    await rooms.close()
    again = open_league_store(None, data_dir=tmp_path)
    try:
        assert isinstance(again, MemoryLeagueStore)
        assert await check(again, "d", time.time()) == "p"
    finally:
        await again.close()
    plain = open_league_store(None)
    await plain.create_session("d", "p", now=time.time(), ttl=TTL)
    await plain.close()
    assert await check(open_league_store(None), "d", time.time()) is None
